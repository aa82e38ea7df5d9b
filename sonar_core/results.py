"""A run's results as tables, for analysts: rows, leaderboards, problems and insights as frames.

:func:`open_run` reads any result folder on disk (run.json and each evaluator's JSON artifacts,
by the names in :mod:`sonar_core.names`); :func:`sonar_core.run` returns the same object for the
run it just made. Each table is a pandas ``DataFrame`` when pandas is installed, else a datatable
``Frame`` (datatable is part of the base install); :func:`frame` is that choice.

Example::

    import sonar_core
    result = sonar_core.open_run("reports/quickstart-20250101-120000-000000")
    rows = result.rows("rouge")          # one row per dataset row, every ROUGE metric a column
    board = result.leaderboard("rouge")  # one row per model, best first
    boards = result.leaderboard()        # every evaluator's, an ``evaluator`` column first
    result.problems()                    # every problem of the run, one per row
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TypedDict

from . import names
from .artifacts.record_shapes import InsightJson, ProblemJson
from .jsontypes import JsonObject
from .result_rows import rows_table
from .errors import EXIT_BUDGET, EXIT_EVALUATOR_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEMS, ConfigError
from .execution.state import ExecutionResult
from .findings.run_findings import gating_problems

__all__ = ["RunResult", "RecordList", "open_run", "frame"]

#: Leaderboard folders, in the order they are looked for.
_LEADERBOARDS = (names.HEATMAP_LEADERBOARD, names.BOOL_LEADERBOARD)
#: Problems shown by ``_repr_html_`` before "and N more".
_HTML_PROBLEMS = 10
#: Models named by ``repr`` before "+N more".
_REPR_MODELS = 5


class EvaluatorFolder(TypedDict):
    """An evaluator that ran, as the tables find it: its label, id, folder and status."""

    label: str
    evaluator_id: str
    folder: Path
    status: str


def frame(records: list[JsonObject], columns: list[str] | None = None):
    """``records`` (dicts read from the run's JSON files, or made of them) as a pandas DataFrame when pandas is installed, else a datatable Frame.

    ``columns`` fixes the columns and their order (default: every key, in first-seen order); a
    record without a column has None there. In a datatable Frame a column of lists or dicts (the
    rows' ``context``, a problem's attributes) holds Python objects (stype ``obj64``).
    """
    if columns is None:
        columns = list(dict.fromkeys(key for record in records for key in record))
    try:
        import pandas
    except ImportError:
        return _datatable_frame(records, columns)
    return pandas.DataFrame.from_records([[r.get(c) for c in columns] for r in records], columns=columns)


def _datatable_frame(records: list[JsonObject], columns: list[str]):
    import datatable as dt

    parts = []
    for name in columns:
        values = [record.get(name) for record in records]
        try:
            parts.append(dt.Frame({name: values}))
        except (TypeError, ValueError):  # lists, dicts or mixed types: keep the Python objects
            parts.append(dt.Frame({name: values}, stypes={name: dt.obj64}))
    return dt.cbind(*parts) if parts else dt.Frame()


class RecordList(list):
    """A run's problems (or insights): a list of dicts, and called, the same as a frame.

    ``result.problems`` is the list it always was; ``result.problems()`` is the table.
    """

    def __init__(self, items: Iterable[ProblemJson | InsightJson] = ()) -> None:
        super().__init__(items)

    def __call__(self):
        """One row per problem (insight), one column per field."""
        return frame(list(self))


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class RunResult(ExecutionResult):
    """What a run produced, and its tables (see the module docstring).

    The attributes are the run layer's (``run_dir``, ``status``, ``exit_code``, ``executed``,
    ``problems``, ``insights``, ``failed``, ``skipped``, ``message``) and ``models`` (the models the
    run evaluated); ``problems`` and ``insights`` are also callable (:class:`RecordList`). Tables are
    read from the folder on disk when asked. ``print(result)`` is one line (:meth:`__repr__`).
    """

    #: The models (``model_key``) the run evaluated, as run.json lists them.
    models: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.run_dir = Path(self.run_dir)
        self.problems = RecordList(self.problems)
        self.insights = RecordList(self.insights)

    def __repr__(self) -> str:
        """One line, whatever the run's size: run id, folder, status and exit code, how many evaluators
        ran (failed, skipped), the models and how many problems. The tables hold the rest."""
        counts = ", ".join(f"{len(items)} {what}"
                           for items, what in ((self.failed, "failed"), (self.skipped, "skipped")) if items)
        shown = [str(m) for m in self.models[:_REPR_MODELS]]
        if len(self.models) > _REPR_MODELS:
            shown.append(f"+{len(self.models) - _REPR_MODELS} more")
        return (f"RunResult(run_id={self.run_dir.name!r}, run_dir={str(self.run_dir)!r}, status={self.status!r}, "
                f"exit_code={self.exit_code}, evaluators={len(self.executed)}"
                + (f" ({counts})" if counts else "") + f", models=[{', '.join(shown)}], "
                f"problems={len(self.problems)})")

    __str__ = __repr__

    # -- where things are -------------------------------------------------------------------

    def _evaluators(self) -> list[EvaluatorFolder]:
        """``{label, evaluator_id, folder}`` of every evaluator that ran, in run order."""
        found: list[EvaluatorFolder] = []
        for entry in self.executed:
            location = entry.get("job_location")
            label = entry.get("name") or entry.get("evaluator_id") or ""
            if location:
                found.append({"label": label, "evaluator_id": entry.get("evaluator_id", label),
                              "folder": self.run_dir / location, "status": entry.get("status", "success")})
        if found or self.executed:
            return found
        # An older run.json without the entries: the explainer_* folders and their descriptors.
        for folder in sorted(self.run_dir.glob("explainer_*")):
            descriptor = folder / names.RESULT_DESCRIPTOR
            key = _read_json(descriptor).get("key", folder.name) if descriptor.is_file() else folder.name
            found.append({"label": key, "evaluator_id": key, "folder": folder, "status": "success"})
        return found

    def _pick(self, evaluator: str) -> EvaluatorFolder:
        evaluators = self._evaluators()
        for by in ("label", "evaluator_id"):
            matches = [e for e in evaluators if e[by] == evaluator]
            if len(matches) == 1 or (matches and by == "label"):
                return matches[0]
            if matches:
                raise ConfigError(f"evaluator '{evaluator}' ran {len(matches)} times in {self.run_dir}; "
                                  f"name one of: {', '.join(e['label'] for e in matches)}")
        known = ", ".join(e["label"] for e in evaluators) or "none"
        raise ConfigError(f"no evaluator '{evaluator}' in {self.run_dir} (evaluators: {known})")

    # -- tables ---------------------------------------------------------------------------

    def _results(self, entry: EvaluatorFolder) -> JsonObject | None:
        path = entry["folder"] / names.EVAL_RESULTS / names.mime_dir(names.MIME_JSON) / f"{names.EXPLANATION_STEM}.json"
        return _read_json(path) if path.is_file() else None  # save_llm_result: false, or it failed

    def rows(self, evaluator: str | None = None, columns: list[str] | None = None):
        """One row per dataset row and evaluator: the row's columns and every metric as a column.

        ``evaluator``: a label or evaluator id (default: every evaluator that ran). The first column,
        ``evaluator``, names the evaluator's label; a metric another evaluator does not have is None
        on its rows. Values are the evaluated dataset's (``global_llm_eval_results``) as written.
        ``columns``: only these (after ``evaluator``), e.g. ``["key", "model_passes"]``; from Parquet
        only they are read, which is what makes a million rows quick. A name the rows lack: ConfigError.
        """
        chosen = [self._pick(evaluator)] if evaluator is not None else self._evaluators()
        # The JSON eval results where written, else the Parquet rows joined with the run's dataset copy.
        try:
            return rows_table(self.run_dir, chosen, self._results, frame, columns)
        except ValueError as exc:
            raise ConfigError(f"{self.run_dir}: {exc}") from None

    def leaderboard(self, evaluator: str | None = None):
        """One row per model, best first: ``model``, ``rank``, each metric's mean, ``rows``,
        ``total_time``, ``total_cost`` (and a bool leaderboard's ``count_<role>`` counts).

        ``evaluator`` None: every evaluator's leaderboard in one table, as :meth:`rows` does: the first
        column, ``evaluator``, names the evaluator's label; evaluators in run order, each's models best
        first; a metric another evaluator does not have is None on its rows. An evaluator that wrote no
        leaderboard (it failed) is left out; naming it raises ConfigError.
        """
        if evaluator is not None:
            entry = self._pick(evaluator)
            records = self._board(entry)
            if records is None:
                raise ConfigError(f"evaluator '{evaluator}' wrote no leaderboard in {entry['folder']}")
            return frame(records)
        everything: list[JsonObject] = []
        columns: dict[str, None] = {"evaluator": None}
        for entry in self._evaluators():
            for record in self._board(entry) or []:
                columns.update(dict.fromkeys(record))
                everything.append({"evaluator": entry["label"], **record})
        return frame(everything, list(columns))

    def _board(self, entry: EvaluatorFolder) -> list[JsonObject] | None:
        """One evaluator's leaderboard records (None when it wrote none)."""
        for board in _LEADERBOARDS:
            index_path = entry["folder"] / board / names.mime_dir(names.MIME_JSON) / f"{names.EXPLANATION_STEM}.json"
            if index_path.is_file():
                index = _read_json(index_path)
                data = _read_json(index_path.parent / index["files"]["ALL_METRICS"])
                break
        else:
            return None
        records: list[JsonObject] = []
        for model in data["ranking"]:
            stats = data.get("models", {}).get(model, {})
            record = {"model": model, "rank": stats.get("rank"), **data["data"].get(model, {})}
            record.update({k: stats.get(k) for k in ("rows", "total_time", "total_cost")})
            record.update({f"count_{k}": v for k, v in stats.get("counts", {}).items()})
            records.append(record)
        return records

    # -- Jupyter --------------------------------------------------------------------------

    def _leaderboard_summary(self) -> list[tuple[str, str, str]]:
        """(evaluator, primary metric, best model and its value) per evaluator with a leaderboard."""
        summary = []
        for entry in self._evaluators():
            for board in _LEADERBOARDS:
                index_path = entry["folder"] / board / names.mime_dir(names.MIME_JSON) / f"{names.EXPLANATION_STEM}.json"
                if not index_path.is_file():
                    continue
                index = _read_json(index_path)
                metric = index.get("primary_metric", "")
                data = _read_json(index_path.parent / index["files"]["ALL_METRICS"])
                best = data["ranking"][0] if data.get("ranking") else ""
                value = data["data"].get(best, {}).get(metric) if best else None
                shown = f"{best} ({value:.4g})" if isinstance(value, (int, float)) else best
                summary.append((entry["label"], metric, shown))
                break
        return summary

    def _repr_html_(self) -> str:
        """The run as Jupyter shows it: status, each evaluator's best model, the problems."""
        e = html.escape
        parts = [f"<div class='sonar-run'><p><b>Sonar run</b> <code>{e(str(self.run_dir))}</code>: "
                 f"<b>{e(self.status)}</b> (exit code {self.exit_code})"
                 + (f" &mdash; {e(self.message)}" if self.message else "") + "</p>"]
        summary = self._leaderboard_summary()
        if summary:
            parts.append("<table><thead><tr><th>evaluator</th><th>primary metric</th><th>best model</th></tr>"
                         "</thead><tbody>")
            parts += [f"<tr><td>{e(a)}</td><td>{e(b)}</td><td>{e(c)}</td></tr>" for a, b, c in summary]
            parts.append("</tbody></table>")
        for skipped in self.skipped:
            parts.append(f"<p>skipped {e(str(skipped.get('evaluator', '')))}: {e(str(skipped.get('reason', '')))}</p>")
        parts.append(f"<p><b>{len(self.problems)} problem(s)</b></p>")
        if self.problems:
            parts.append("<ul>")
            parts += [f"<li>[{e(str(p.get('severity', '')))}] {e(str(p.get('description', '')))}</li>"
                      for p in self.problems[:_HTML_PROBLEMS]]
            if len(self.problems) > _HTML_PROBLEMS:
                parts.append(f"<li>&hellip; and {len(self.problems) - _HTML_PROBLEMS} more</li>")
            parts.append("</ul>")
        parts.append("</div>")
        return "".join(parts)

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def of(cls, result: ExecutionResult) -> "RunResult":
        """The run layer's result, with tables."""
        return cls(run_dir=result.run_dir, status=result.status, exit_code=result.exit_code,
                   executed=result.executed, problems=result.problems, insights=result.insights,
                   failed=result.failed, skipped=result.skipped, message=result.message,
                   costs=getattr(result, "costs", None), models=_models(Path(result.run_dir) / names.RUN_JSON))


def _exit_code(status: str, failed: list[dict[str, str]], problems: list[ProblemJson],
               fail_on: str | None) -> tuple[int, str]:
    """The exit code and message the run had (docs/cli.md), from what run.json records."""
    if failed:
        return EXIT_EVALUATOR_FAILED, f"{len(failed)} evaluator(s) failed: " + "; ".join(
            f"{f['evaluator']}: {f['error']}" for f in failed)
    if fail_on and (gating := gating_problems(problems, fail_on)):
        return EXIT_PROBLEMS, f"{len(gating)} problem(s) at or above severity {fail_on} (--fail-on-problems)"
    return EXIT_OK, ""


def open_run(path: str | Path) -> RunResult:
    """The result of the run whose folder is ``path`` (it holds run.json), with its tables.

    Works for a finished, failed or interrupted run, and for folders written by older Sonar versions
    (evaluators found from their ``explainer_*`` folders when run.json does not list them).
    """
    run_dir = Path(path).expanduser()
    record_path = run_dir / names.RUN_JSON
    if not record_path.is_file():
        raise ConfigError(f"{run_dir}: not a Sonar run folder (no {names.RUN_JSON})")
    # Read as it is (a run of any version): a JSON object, looked into with .get().
    record: JsonObject = _read_json(record_path)
    result: JsonObject = record.get("result") or {}
    executed = list(result.get("executed_explainers") or [])
    failed = [{"evaluator": e.get("name") or e.get("evaluator_id", ""), "error": e.get("error", "")}
              for e in executed if e.get("status") == "failed"]
    problems = list(result.get("problems") or [])
    fail_on = (record.get("interpretation_parameters") or {}).get("fail_on_problems")
    exit_code, message = _exit_code(record.get("status", ""), failed, problems, fail_on)
    if record.get("status") == "stopped_by_budget":  # --max-cost (docs/costs.md)
        exit_code, message = EXIT_BUDGET, str(record.get("error") or "")
    if record.get("status") == "interrupted":  # Ctrl-C (docs/cli.md)
        exit_code, message = EXIT_INTERRUPTED, str(record.get("error") or "")
    return RunResult(run_dir=run_dir, status=record.get("status", ""), exit_code=exit_code, executed=executed,
                     problems=problems, insights=list(result.get("insights") or []), failed=failed,
                     skipped=list(result.get("incompatible_explainers") or []), message=message,
                     costs=record.get("costs"), models=_record_models(record))


def _record_models(record: JsonObject) -> list[str]:
    """The models a run.json record lists (its dataset's), [] when it lists none."""
    result = record.get("result") or {}
    models = result.get("models") or (result.get("dataset") or {}).get("models") or []
    return [str(m) for m in models] if isinstance(models, list) else []


def _models(record_path: Path) -> list[str]:
    """:func:`_record_models` of the run.json at ``record_path`` ([] when there is none to read)."""
    try:
        return _record_models(_read_json(record_path))
    except (OSError, ValueError):
        return []
