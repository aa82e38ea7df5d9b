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
    """A cell of a flat table: lists and objects as JSON text, None as empty."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        # Most list cells are empty; skipping the encoder for them halves the write time.
        return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ("[]" if isinstance(value, list) else "{}")
    return value


def write_eval_results(ev: ScoredEvaluator, root: Path) -> None:
    records = result_records(ev)
    columns = _columns(ev)
    explanation = root / names.EVAL_RESULTS
    document = {
        "schema_version": names.SCHEMA_VERSION,
        "evaluator_id": ev.cls.id,
        "results": records,
        "metrics_meta": metric_meta(ev),
    }
    # Compact: this file grows with the dataset, and indenting 20,000 records costs seconds.
    text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
    write_format(explanation, names.MIME_JSON, {f"{names.EXPLANATION_STEM}.json": text})
    numeric = {"actual_duration", "cost"} | {m.key for m in ev.cls.metrics}
    # Flatten each column once; CSV and .jay share the cells.
    cells = {c: ([r[c] for r in records] if c in numeric else [_flat(r[c]) for r in records]) for c in columns}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*(["" if v is None else v for v in cells[c]] for c in columns)))
    write_format(explanation, names.MIME_CSV, {f"{names.EXPLANATION_STEM}.csv": buffer.getvalue()})
    write_format(explanation, names.MIME_JAY, {f"{names.EXPLANATION_STEM}.jay": _jay_bytes(cells, columns, numeric)})


def _jay_bytes(cells: dict[str, list], columns: list[str], numeric: set[str]) -> bytes:
    import datatable as dt

    data: dict[str, list] = {}
    types: dict[str, Any] = {}
    for column in columns:
        if column in numeric:
            data[column] = [None if v is None else float(v) for v in cells[column]]
            types[column] = dt.Type.float64
        else:
            data[column] = [v if isinstance(v, str) else str(v) for v in cells[column]]
            types[column] = dt.Type.str32
    frame = dt.Frame(data, types=[types[c] for c in columns])
    return frame.to_jay()
