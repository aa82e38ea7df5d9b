"""A trace run's verdicts written back as spans: ``annotations.jsonl`` (OTLP JSON) and ``annotations.csv``.

:func:`read_span_rows` reads what an evaluator's folder holds (each row's ``trace_id``, ``span_id``,
metric values, error message and details; the metrics' meta); each row's score and label (the side of
the threshold the run stored) come from :func:`sonar_core.findings.run_data.span_verdicts`, and
:func:`write_annotations` only writes them.

One **carrier span** per verdict (a row judged by an evaluator), per OpenInference's annotation
convention (``spec/annotations.md``, post-hoc feedback): a new span of kind ``EVALUATOR`` with exactly
one link to the judged span, and the verdict as ``annotations.0.annotation.{name, score, label,
explanation, annotator_kind, identifier, metadata}`` (``trace.annotations.0...`` for a trace row, whose
link is the trace's root; ``session.annotations.0...`` with ``session.id`` for a session row). The same
verdict rides on the carrier as the OpenTelemetry GenAI event ``gen_ai.evaluation.result``
(``gen_ai.evaluation.name``, ``.score.value``, ``.score.label``, ``.explanation``). Carrier ids are
derived from the run id, the evaluator and the judged span, so writing again gives the same file.

The lines are OTLP JSON ``ExportTraceServiceRequest`` s (ids in hex, 64-bit integers as text), up to
:data:`SPANS_PER_LINE` spans each: any OTLP/HTTP receiver takes a line as a request body. The CSV has
Phoenix's span-annotation columns (``span_id``, ``name``, ``annotator_kind``, ``label``, ``score``,
``explanation``, ``identifier``) and Sonar's (``trace_id``, ``evaluator_id``, ``metric``, ``scope``,
``session_id``, ``test_case_key``, ``model_key``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .. import names
from ..errors import DatasetError
from ..findings.run_types import MetricInfo, SpanRows
from ..version import __version__
from .csv_cells import neutralise_row, write_csv_rows
from .columnar_rows import parquet_columns, parquet_metrics_meta
from .run_reader import read_metrics_meta, results_file

__all__ = ["AnnotatedEvaluator", "read_span_rows", "write_annotations", "SPANS_PER_LINE", "TABLE_COLUMNS"]

SPANS_PER_LINE = 512
#: Longest explanation written (a judge's raw answer is cut here).
EXPLANATION_CHARS = 2000
TABLE_COLUMNS = ["span_id", "trace_id", "name", "annotator_kind", "score", "label", "explanation", "identifier",
                 "evaluator_id", "metric", "scope", "session_id", "test_case_key", "model_key"]
_PREFIX = {"span": "", "trace": "trace.", "session": "session."}


@dataclass(frozen=True)
class AnnotatedEvaluator:
    """A finished evaluator of the run: its label (the annotation's name), id, folder and judge kind."""

    label: str
    evaluator_id: str
    folder: Path
    #: ``LLM`` for an evaluator that asks a judge, else ``CODE`` (OpenInference's annotator kinds).
    annotator_kind: str


@dataclass(frozen=True)
class _Verdict:
    evaluator: AnnotatedEvaluator
    trace_id: str
    span_id: str
    test_case_key: str
    model_key: str
    metric: str
    score: float | None
    label: str | None
    explanation: str
    metrics: dict[str, float | None]


def _columns(folder: Path, keys: list[str]) -> dict[str, list]:
    import datatable as dt  # imported here: only the writers need it

    path = results_file(folder.parent, folder.name, names.MIME_JAY)
    try:
        frame = dt.fread(str(path))
    except Exception as exc:  # datatable raises its own types for a damaged file
        raise DatasetError(f"{path}: cannot be read ({str(exc).splitlines()[0]})") from None
    present = set(frame.names)
    return {c: frame[:, c].to_list()[0] if c in present else [None] * frame.nrows for c in keys}


def _explanation(error: Any, details: Any) -> str:
    """The row's error message, else the judge's first answer."""
    if isinstance(error, str) and error.strip():
        return error[:EXPLANATION_CHARS]
    if isinstance(details, str) and details.startswith("{"):
        try:
            answers = json.loads(details).get("judge_answers")
        except (json.JSONDecodeError, AttributeError):
            answers = None
        if isinstance(answers, list) and answers and isinstance(answers[0], str):
            return answers[0][:EXPLANATION_CHARS]
    return ""


def read_span_rows(evaluator: AnnotatedEvaluator) -> SpanRows | None:
    """The rows of ``evaluator``'s results file a verdict needs; None when it saved none (``save_llm_result:
    false``)."""
    folder = evaluator.folder
    parquet_only = not results_file(folder.parent, folder.name, names.MIME_JAY).is_file()
    # Above the run's columnar_only_above only Parquet holds the rows (columnar_rows, the reader rows() uses).
    meta = parquet_metrics_meta(folder) if parquet_only else read_metrics_meta(results_file(folder.parent, folder.name))
    if meta is None:
        return None
    metrics = tuple(MetricInfo(key=m["key"], display_name=m.get("display_name") or m["key"],
                               higher_is_better=bool(m.get("higher_is_better", True)), threshold=m.get("threshold"),
                               is_primary=bool(m.get("is_primary_metric"))) for m in meta)
    primary = next((m for m in metrics if m.is_primary), metrics[0])
    keys = ["trace_id", "span_id", "test_case_key", "model_key", "result_error_message", "details", "judge_trust",
            *[m.key for m in metrics]]
    columns = parquet_columns(folder, folder.parent, keys) if parquet_only else _columns(folder, keys)
    return SpanRows(metrics=metrics, primary=primary, columns=columns)


def _verdicts(evaluator: AnnotatedEvaluator, rows: SpanRows, scores: Sequence[float | None],
              labels: Sequence[str | None]) -> Iterator[_Verdict]:
    columns, keys = rows.columns, [m.key for m in rows.metrics]
    for n, span_id in enumerate(columns["span_id"]):
        if not span_id or not columns["trace_id"][n]:
            continue
        yield _Verdict(evaluator, columns["trace_id"][n], span_id, str(columns["test_case_key"][n]),
                       str(columns["model_key"][n]), rows.primary.key, scores[n], labels[n],
                       _explanation(columns["result_error_message"][n], columns["details"][n]),
                       {k: (None if columns[k][n] is None or columns[k][n] != columns[k][n] else columns[k][n])
                        for k in keys})


def _value(value: Any) -> dict[str, Any]:
    """An attribute value as an OTLP JSON AnyValue."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None and value != ""]


def _ids(run_id: str, verdict: _Verdict) -> tuple[str, str]:
    digest = hashlib.sha256("\0".join((run_id, verdict.evaluator.label, verdict.trace_id, verdict.span_id,
                                       verdict.test_case_key)).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:32], digest[32:48]


def _carrier(verdict: _Verdict, run_id: str, scope: str, time_ns: int) -> dict[str, Any]:
    trace_id, span_id = _ids(run_id, verdict)
    prefix = f"{_PREFIX[scope]}annotations.0.annotation."
    metadata = {"evaluator_id": verdict.evaluator.evaluator_id, "metric": verdict.metric, "metrics": verdict.metrics,
                "test_case_key": verdict.test_case_key, "model_key": verdict.model_key, "run_id": run_id}
    attributes = {"openinference.span.kind": "EVALUATOR",
                  **({"session.id": verdict.test_case_key} if scope == "session" else {}),
                  f"{prefix}name": verdict.evaluator.label, f"{prefix}score": verdict.score,
                  f"{prefix}label": verdict.label, f"{prefix}explanation": verdict.explanation,
                  f"{prefix}annotator_kind": verdict.evaluator.annotator_kind, f"{prefix}identifier": run_id,
                  f"{prefix}metadata": json.dumps(metadata, ensure_ascii=False, sort_keys=True, allow_nan=False)}
    event = {"gen_ai.evaluation.name": verdict.evaluator.label, "gen_ai.evaluation.score.value": verdict.score,
             "gen_ai.evaluation.score.label": verdict.label, "gen_ai.evaluation.explanation": verdict.explanation}
    return {"traceId": trace_id, "spanId": span_id, "name": f"{verdict.evaluator.label} evaluation", "kind": 1,
            "startTimeUnixNano": str(time_ns), "endTimeUnixNano": str(time_ns),
            "attributes": _attributes(attributes),
            "events": [{"timeUnixNano": str(time_ns), "name": "gen_ai.evaluation.result",
                        "attributes": _attributes(event)}],
            "links": [{"traceId": verdict.trace_id, "spanId": verdict.span_id}]}


def _request(spans: list[dict[str, Any]], run_id: str) -> str:
    request = {"resourceSpans": [{"resource": {"attributes": _attributes({"service.name": "sonar",
                                                                          "sonar.run_id": run_id})},
                                  "scopeSpans": [{"scope": {"name": "sonar", "version": __version__},
                                                  "spans": spans}]}]}
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def write_annotations(run_dir: Path, run_id: str, scope: str,
                      evaluators: Iterable[tuple[AnnotatedEvaluator, SpanRows, Sequence[float | None],
                                                 Sequence[str | None]]],
                      time_ns: int, csv_formula_escape: bool = True) -> int:
    """Write ``annotations.jsonl`` and ``annotations.csv`` in ``run_dir``; returns the verdicts written.

    ``evaluators``: each evaluator with its rows (:func:`read_span_rows`) and their scores and labels
    (:func:`sonar_core.findings.run_data.span_verdicts`), read one at a time. ``scope``: the rows' trace
    scope (span, trace, session); ``time_ns``: the carriers' time (ns since the epoch).
    """
    targets = [run_dir / names.ANNOTATIONS_JSONL, run_dir / names.ANNOTATIONS_CSV]
    temporary = [t.with_name(t.name + ".tmp") for t in targets]
    written = 0
    with open(temporary[0], "w", encoding="utf-8", newline="") as spans_file, \
            open(temporary[1], "w", encoding="utf-8", newline="") as table_file:
        writer = csv.writer(table_file, lineterminator="\n")
        writer.writerow(TABLE_COLUMNS)
        batch: list[dict[str, Any]] = []
        for evaluator, rows, scores, labels in evaluators:
            table = []
            for verdict in _verdicts(evaluator, rows, scores, labels):
                batch.append(_carrier(verdict, run_id, scope, time_ns))
                if len(batch) == SPANS_PER_LINE:
                    spans_file.write(_request(batch, run_id))
                    batch = []
                row = [verdict.span_id, verdict.trace_id, evaluator.label, evaluator.annotator_kind,
                       "" if verdict.score is None else verdict.score, verdict.label or "", verdict.explanation,
                       run_id, evaluator.evaluator_id, verdict.metric, scope,
                       verdict.test_case_key if scope == "session" else "", verdict.test_case_key, verdict.model_key]
                table.append(tuple(neutralise_row(row)) if csv_formula_escape else tuple(row))
                written += 1
            write_csv_rows(table_file, writer, table)
        if batch:
            spans_file.write(_request(batch, run_id))
    for source, target in zip(temporary, targets):
        os.replace(source, target)
    return written
