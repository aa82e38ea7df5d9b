"""Read a finished result folder back as :class:`~sonar_core.findings.run_types.RunData`.

``sonar compare`` reads two runs this way. The per-row values come from each evaluator's
llm-eval-results ``.jay`` file (datatable reads only the columns asked for, which keeps a
200,000-row run to a fraction of a second), the metric descriptions from the tail of its JSON
twin (``metrics_meta`` is written last); a folder without the ``.jay`` is read from the JSON, and
one above the run's ``columnar_only_above`` (Parquet only) from its Parquet rows and their
metadata (:mod:`.columnar_rows`, the reader ``open_run(...).rows()`` uses).

Anything unreadable or of another schema is a one-line :class:`~sonar_core.errors.DatasetError`
naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import names
from ..errors import DatasetError
from ..findings.run_types import EvaluatorData, MetricInfo, RunData
from ..findings.types import MeanInterval
from .columnar import evaluator_parquet
from .columnar_rows import parquet_columns, parquet_metrics_meta

__all__ = ["read_run", "results_file", "read_metrics_meta"]

#: The tail of explanation.json read for ``metrics_meta``; a longer list falls back to the whole file.
_TAIL_BYTES = 1 << 20
_META_MARK = '],"metrics_meta":'


def results_file(run_dir: Path, folder: str, mime: str = names.MIME_JSON) -> Path:
    ext = {names.MIME_JSON: "json", names.MIME_JAY: "jay"}[mime]
    return run_dir / folder / names.EVAL_RESULTS / names.mime_dir(mime) / f"{names.EXPLANATION_STEM}.{ext}"


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path}: not found (is this a Sonar result folder?)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be read as JSON ({str(exc).splitlines()[0]})") from None


def _metrics_meta(path: Path) -> list[dict[str, Any]]:
    """``metrics_meta`` of an explanation.json, from its tail when it can be found there."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror})") from None
    at = tail.rfind(_META_MARK)
    if at >= 0:
        try:
            return json.loads("{" + tail[at + 2:])["metrics_meta"]
        except (json.JSONDecodeError, KeyError):
            pass
    data = _load_json(path)
    if not isinstance(data, dict) or "metrics_meta" not in data:
        raise DatasetError(f"{path}: no metrics_meta (not an llm-eval-results file)")
    return data["metrics_meta"]


def _parquet_meta(folder: Path) -> list[dict[str, Any]] | None:
    """``metrics_meta`` from a folder's Parquet rows (None: it has none); a damaged file is a DatasetError."""
    try:
        return parquet_metrics_meta(folder)
    except Exception as exc:  # pyarrow raises its own types for damaged files
        raise DatasetError(f"{folder}: its Parquet rows cannot be read ({str(exc).splitlines()[0]})") from None


#: ``metrics_meta`` of an evaluator's explanation.json (the annotations writer reads it too).
read_metrics_meta = _metrics_meta


def _metric(meta: dict[str, Any]) -> MetricInfo:
    return MetricInfo(key=meta["key"], display_name=meta.get("display_name") or meta["key"],
                      higher_is_better=bool(meta.get("higher_is_better", True)), threshold=meta.get("threshold"),
                      is_primary=bool(meta.get("is_primary_metric")), model_level=bool(meta.get("model_level")))


def _columns(run_dir: Path, folder: str, keys: list[str]) -> dict[str, list]:
    """The columns ``test_case_key``, ``model_key`` and ``keys`` of an evaluator's results."""
    jay = results_file(run_dir, folder, names.MIME_JAY)
    wanted = ["test_case_key", "model_key", *keys]
    if jay.is_file():
        import datatable as dt

        try:
            frame = dt.fread(str(jay))
            present = set(frame.names)
            return {c: (frame[:, c].to_list()[0] if c in present else [None] * frame.nrows) for c in wanted}
        except Exception as exc:  # datatable raises its own types for damaged files
            raise DatasetError(f"{jay}: cannot be read ({str(exc).splitlines()[0]})") from None
    path = results_file(run_dir, folder)
    if not path.is_file() and (parquet := _parquet_columns(run_dir, folder, wanted)) is not None:
        return parquet
    data = _load_json(path)
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise DatasetError(f"{path}: no results list")
    return {c: [row.get(c) for row in rows] for c in wanted}


def _parquet_columns(run_dir: Path, folder: str, wanted: list[str]) -> dict[str, list] | None:
    """The ``wanted`` columns of a folder's Parquet rows (None: it has none); a damaged file is a DatasetError."""
    if not evaluator_parquet(run_dir / folder).is_file():
        return None
    try:
        return parquet_columns(run_dir / folder, run_dir, wanted)
    except Exception as exc:  # pyarrow raises its own types for damaged files
        raise DatasetError(f"{evaluator_parquet(run_dir / folder)}: cannot be read ({str(exc).splitlines()[0]})") from None


def _interval(entry: dict[str, Any]) -> MeanInterval:
    return MeanInterval(entry.get("ci_low"), entry.get("ci_high"), entry.get("n"), entry.get("method"))


def _stored_intervals(run_dir: Path, folder: str) -> dict[tuple[str, str], MeanInterval]:
    """(metric, model) -> the interval the evaluator's leaderboard holds (its all-metrics file); empty
    when the run wrote none (an older run) or the file cannot be read: the comparison then computes them."""
    for board in (names.HEATMAP_LEADERBOARD, names.BOOL_LEADERBOARD):
        path = run_dir / folder / board / names.mime_dir(names.MIME_JSON) / "leaderboard_0.json"
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {(key, model): _interval(entry) for model, entries in data.get("intervals", {}).items()
                    for key, entry in entries.items() if isinstance(entry, dict)}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError, TypeError, ValueError):
            return {}
    return {}


def _evaluator(run_dir: Path, entry: dict[str, Any], parameters: dict[str, Any]) -> EvaluatorData:
    folder = entry["job_location"]
    path = results_file(run_dir, folder)
    meta = _metrics_meta(path) if path.is_file() else _parquet_meta(run_dir / folder) or _metrics_meta(path)
    metrics = [_metric(m) for m in meta]
    columns = _columns(run_dir, folder, [m.key for m in metrics])
    values = {m.key: columns[m.key] for m in metrics}
    return EvaluatorData(label=entry["name"], evaluator_id=entry["evaluator_id"],
                         parameters=parameters.get(entry["name"], {}), folder=folder, metrics=metrics,
                         test_case_keys=[str(k) for k in columns["test_case_key"]],
                         model_keys=[str(k) for k in columns["model_key"]], values=values,
                         stored_intervals=_stored_intervals(run_dir, folder))


def read_run(run_dir: Path, schema_version: str = names.SCHEMA_VERSION) -> RunData:
    """The scores of the finished run in ``run_dir``.

    Raises DatasetError when run.json is missing or unreadable, or its ``schema_version`` is
    not ``schema_version``.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise DatasetError(f"{run_dir}: not a folder")
    path = run_dir / names.RUN_JSON
    record = _load_json(path)
    try:
        found = record["schema_version"]
        if found != schema_version:
            raise DatasetError(f"{path}: schema_version {found!r}, this Sonar reads {schema_version!r}")
        outcome = record["result"]
        executed = outcome["executed_explainers"]
        parameters = outcome.get("explainers_parameters") or {}
        evaluators, unfinished, not_finished = [], {}, {}
        for entry in executed:
            if entry.get("status") != "success":
                unfinished[entry["name"]] = entry.get("status") or "unknown"
            elif not (run_dir / entry["job_location"] / names.DONE_MARKER).is_file():
                not_finished[entry["name"]] = "no done marker"
            else:
                evaluators.append(_evaluator(run_dir, entry, parameters))
        ran = {entry["name"] for entry in executed} | set(outcome.get("incompatible_explainer_ids") or [])
        for label in outcome.get("scheduled_explainers") or []:
            if label not in ran:
                not_finished[label] = "not run: the run stopped before it"
        cases = list(dict.fromkeys(k for ev in evaluators for k in ev.test_case_keys))
        return RunData(path=str(run_dir), run_id=record["run_id"], schema_version=found,
                       sonar_version=str(record["versions"]["sonar"]), models=list(outcome["models"]),
                       test_cases=cases, evaluators=evaluators, unfinished=unfinished,
                       statistics=dict(record.get("statistics") or {}), status=str(record.get("status")),
                       not_finished=not_finished)
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: missing field {exc} (not a finished Sonar run?)") from None
