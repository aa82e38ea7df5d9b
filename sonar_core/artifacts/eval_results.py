"""The llm-eval-results explanation: the evaluated dataset as JSON, CSV and datatable .jay.

The three hold the same rows. JSON keeps lists and objects as they are; CSV and .jay cells
hold them as JSON text, since both are flat tables.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from .. import names
from ..aggregate import ScoredEvaluator
from ..leaderboards import metric_meta
from .formats import write_format

__all__ = ["result_records", "write_eval_results", "RECORD_FIELDS"]

#: Dataset fields of each result record, in column order; metric columns follow.
RECORD_FIELDS = [
    "key", "test_case_key", "model_key", "test_key", "input", "corpus", "context", "categories",
    "relationships", "expected_output", "output_constraints", "output_condition", "actual_output",
    "actual_duration", "cost", "original_test_case_key", "perturbation",
]
_TRAILING_FIELDS = ["result_error_message", "details", "actual_output_meta"]


def result_records(ev: ScoredEvaluator) -> list[dict[str, Any]]:
    """One record per scored row: dataset fields, metric values, error message, details."""
    records = []
    for row, result in ev.scored:
        record = {field: getattr(row, field) for field in RECORD_FIELDS}
        for metric in ev.cls.metrics:
            record[metric.key] = result.values.get(metric.key)
        record["result_error_message"] = result.error_message or ""
        record["details"] = result.details
        record["actual_output_meta"] = result.actual_output_meta or []
        records.append(record)
    return records


def _columns(ev: ScoredEvaluator) -> list[str]:
    return RECORD_FIELDS + [m.key for m in ev.cls.metrics] + _TRAILING_FIELDS


def _flat(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def write_eval_results(ev: ScoredEvaluator, root: Path) -> None:
    records = result_records(ev)
    columns = _columns(ev)
    explanation = root / names.EVAL_RESULTS
    write_format(
        explanation,
        names.MIME_JSON,
        {f"{names.EXPLANATION_STEM}.json": {
            "schema_version": names.SCHEMA_VERSION,
            "evaluator_id": ev.cls.id,
            "results": records,
            "metrics_meta": metric_meta(ev),
        }},
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow(["" if record[c] is None else _flat(record[c]) for c in columns])
    write_format(explanation, names.MIME_CSV, {f"{names.EXPLANATION_STEM}.csv": buffer.getvalue()})
    write_format(explanation, names.MIME_JAY, {f"{names.EXPLANATION_STEM}.jay": _jay_bytes(records, columns, ev)})


def _jay_bytes(records: list[dict[str, Any]], columns: list[str], ev: ScoredEvaluator) -> bytes:
    import datatable as dt

    numeric = {"actual_duration", "cost"} | {m.key for m in ev.cls.metrics}
    data: dict[str, list] = {}
    types: dict[str, Any] = {}
    for column in columns:
        if column in numeric:
            data[column] = [None if r[column] is None else float(r[column]) for r in records]
            types[column] = dt.Type.float64
        else:
            data[column] = ["" if r[column] is None else str(_flat(r[column])) for r in records]
            types[column] = dt.Type.str32
    frame = dt.Frame(data, types=[types[c] for c in columns]) if records else dt.Frame(
        {c: [] for c in columns}, types=[types[c] for c in columns])
    return frame.to_jay()
