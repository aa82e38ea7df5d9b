"""The llm-eval-results explanation: the evaluated dataset as JSON, CSV and datatable .jay.

The three hold the same rows. JSON keeps lists and objects as they are; CSV and .jay cells
hold them as JSON text, since both are flat tables.

The files grow with the dataset, so they are written in chunks of rows: each chunk's records
are encoded once for the JSON file, its cells once for both the CSV and the .jay, and nothing
holds a copy of every row at the same time except the .jay frame (datatable's compact
column buffers). Each file goes to ``<name>.tmp`` first and is renamed when complete.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable

from .. import names
from ..aggregate import ScoredEvaluator
from ..leaderboards import metric_meta
from .csv_cells import FORMULA_PREFIXES, neutralise_cell
from .formats import write_meta

__all__ = ["result_records", "write_eval_results", "RECORD_FIELDS", "CHUNK_ROWS"]

#: Dataset fields of each result record, in column order; metric columns follow.
RECORD_FIELDS = [
    "key", "test_case_key", "model_key", "test_key", "input", "corpus", "context", "categories",
    "relationships", "expected_output", "output_constraints", "output_condition", "actual_output",
    "actual_duration", "cost", "original_test_case_key", "perturbation",
]
_TRAILING_FIELDS = ["result_error_message", "details", "actual_output_meta"]
#: Rows encoded per chunk: large enough that per-chunk costs vanish, small enough that a
#: chunk's records and cells stay a few MB.
CHUNK_ROWS = 2048

# Compact JSON, the exact text json.dumps(..., separators=(",", ":")) gives; NaN is refused.
_RECORD_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
# CSV and .jay cells: lists and objects as JSON text with sorted keys.
_CELL_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def _record(row, result, metric_keys: list[str]) -> dict[str, Any]:
    record = {field: getattr(row, field) for field in RECORD_FIELDS}
    values = result.values
    for key in metric_keys:
        record[key] = values.get(key)
    record["result_error_message"] = result.error_message or ""
    record["details"] = result.details
    record["actual_output_meta"] = result.actual_output_meta or []
    return record


def result_records(ev: ScoredEvaluator) -> list[dict[str, Any]]:
    """One record per scored row: dataset fields, metric values, error message, details."""
    metric_keys = [m.key for m in ev.cls.metrics]
    return [_record(row, result, metric_keys) for row, result in ev.scored]


def _columns(ev: ScoredEvaluator) -> list[str]:
    # A metric named like a dataset field replaces that field's value in place (dict order).
    return list(dict.fromkeys(RECORD_FIELDS + [m.key for m in ev.cls.metrics] + _TRAILING_FIELDS))


def _flat(value: Any) -> Any:
    """A cell of a flat table: lists and objects as JSON text, None as empty."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        # Most list cells are empty; skipping the encoder for them halves the write time.
        return _CELL_ENCODER.encode(value) if value else ("[]" if isinstance(value, list) else "{}")
    return value


def _csv_text(value: Any) -> str:
    """One CSV cell as Python's csv writer (QUOTE_MINIMAL) writes it, but quoting a lone CR too.

    The csv module quotes a field only for the delimiter, the quote and the characters of its
    line terminator ("\\n" here), so a cell holding "\\r" without "\\n" came out unquoted and
    readers split the row there.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


# A column may need a look cell by cell only when its cells, joined, show a formula start or a CR.
_MAYBE_FORMULA = re.compile("(?:^|\x00)[" + re.escape("".join(FORMULA_PREFIXES)) + "]")


def _csv_column(values: list[Any], escape: bool) -> tuple[list[Any], bool]:
    """A text column's CSV cells (neutralised when ``escape``) and whether one holds a CR."""
    try:
        joined = "\x00".join(values)
    except TypeError:  # a plugin's non-text value in a text column: written as str() as before
        values = [v if isinstance(v, str) else str(v) for v in values]
        joined = "\x00".join(values)
    if escape and _MAYBE_FORMULA.search(joined):
        values = [neutralise_cell(v) for v in values]
    return values, "\r" in joined


def _write_csv_chunk(handle, writer, rows: list[tuple], has_cr: bool) -> None:
    if not has_cr:
        writer.writerows(rows)
        return
    plain: list[tuple] = []
    for cells in rows:
        if any(isinstance(v, str) and "\r" in v for v in cells):
            writer.writerows(plain)
            plain = []
            handle.write(",".join(_csv_text(v) for v in cells) + "\n")
        else:
            plain.append(cells)
    writer.writerows(plain)


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def write_eval_results(ev: ScoredEvaluator, root: Path, csv_formula_escape: bool = True) -> None:
    """Write the JSON, CSV and .jay files of llm-eval-results and their .meta files.

    ``csv_formula_escape``: neutralise CSV text cells a spreadsheet would run (:mod:`.csv_cells`).
    """
    import datatable as dt  # imported here: only this writer needs it

    explanation = root / names.EVAL_RESULTS
    columns = _columns(ev)
    metric_keys = [m.key for m in ev.cls.metrics]
    numeric = {"actual_duration", "cost", *metric_keys}
    types = [dt.Type.float64 if c in numeric else dt.Type.str32 for c in columns]
    targets = {mime: explanation / names.mime_dir(mime) / f"{names.EXPLANATION_STEM}.{ext}"
               for mime, ext in ((names.MIME_JSON, "json"), (names.MIME_CSV, "csv"), (names.MIME_JAY, "jay"))}
    for target in targets.values():
        target.parent.mkdir(parents=True, exist_ok=True)
    temporary = {mime: target.with_name(target.name + ".tmp") for mime, target in targets.items()}

    head = _RECORD_ENCODER.encode({"schema_version": names.SCHEMA_VERSION, "evaluator_id": ev.cls.id})
    tail = "]," + _RECORD_ENCODER.encode({"metrics_meta": metric_meta(ev)})[1:] + "\n"
    frames = []
    with open(temporary[names.MIME_JSON], "w", encoding="utf-8") as json_file, \
            open(temporary[names.MIME_CSV], "w", encoding="utf-8", newline="") as csv_file:
        json_file.write(head[:-1] + ',"results":[')
        writer = csv.writer(csv_file, lineterminator="\n")
        header, header_cr = _csv_column(columns, csv_formula_escape)
        _write_csv_chunk(csv_file, writer, [tuple(header)], header_cr)
        first = True
        for chunk in _chunks(ev.scored, CHUNK_ROWS):
            records = [_record(row, result, metric_keys) for row, result in chunk]
            encoded = _RECORD_ENCODER.encode(records)
            json_file.write(encoded[1:-1] if first else "," + encoded[1:-1])
            first = False
            del encoded
            cells = {c: ([r[c] for r in records] if c in numeric else [_flat(r[c]) for r in records])
                     for c in columns}
            del records
            csv_columns, has_cr = [], False
            for c in columns:
                if c in numeric:
                    csv_columns.append(["" if v is None else v for v in cells[c]])
                else:
                    column, cr = _csv_column(cells[c], csv_formula_escape)
                    csv_columns.append(column)
                    has_cr = has_cr or cr
            _write_csv_chunk(csv_file, writer, list(zip(*csv_columns)), has_cr)
            del csv_columns
            frames.append(dt.Frame(_jay_columns(cells, columns, numeric), types=types))
        json_file.write(tail)
    frame = dt.rbind(*frames) if frames else dt.Frame(_jay_columns({c: [] for c in columns}, columns, numeric),
                                                      types=types)
    del frames
    frame.to_jay(str(temporary[names.MIME_JAY]))
    del frame
    for mime, target in targets.items():
        os.replace(temporary[mime], target)
        write_meta(explanation, mime, [target.name])


def _jay_columns(cells: dict[str, list], columns: list[str], numeric: set[str]) -> dict[str, list]:
    data: dict[str, list] = {}
    for column in columns:
        if column in numeric:
            data[column] = [None if v is None else float(v) for v in cells[column]]
        else:
            data[column] = [v if isinstance(v, str) else str(v) for v in cells[column]]
    return data
