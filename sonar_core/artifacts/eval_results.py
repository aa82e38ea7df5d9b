"""The llm-eval-results explanation: the evaluated dataset as JSON, CSV and datatable .jay.

The three hold the same rows. JSON keeps lists and objects as they are; CSV and .jay cells
hold them as JSON text, since both are flat tables.

The files grow with the dataset, so they are written in chunks of rows: each chunk's records
are encoded once for the JSON file and its cells once for both the CSV and the .jay, so the
JSON and CSV texts never exist whole in memory. Only the .jay needs every row at once: its
frame (datatable's column buffers) is built at the end from per-column lists that mostly
point at the rows' own strings. Each file goes to ``<name>.tmp`` first and is renamed when
complete.
"""

from __future__ import annotations

import csv
import os
import re
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Iterable

from .. import names
from ..named_files import named_open, naming
from ..findings.scored import ScoredEvaluator
from ..findings.leaderboards import metric_meta
from .csv_cells import FORMULA_PREFIXES, neutralise_cell, neutralise_row, write_csv_rows
from .formats import write_meta
from .jsontext import compact_encoder

__all__ = ["result_records", "write_eval_results", "RECORD_FIELDS", "CHUNK_ROWS"]

#: Dataset fields of each result record, in column order; metric columns follow.
RECORD_FIELDS = [
    "key", "test_case_key", "model_key", "test_key", "input", "corpus", "context", "categories",
    "relationships", "expected_output", "output_constraints", "output_condition", "actual_output",
    "actual_duration", "cost", "original_test_case_key", "perturbation",
]
_TRAILING_FIELDS = ["result_error_message", "details", "actual_output_meta"]
_TRACE_FIELDS = ["trace_id", "span_id"]
#: Rows encoded per chunk: large enough that per-chunk costs vanish, small enough that a
#: chunk's records and cells stay a few MB.
CHUNK_ROWS = 2048

# Compact JSON, the exact text json.dumps(..., separators=(",", ":")) gives; NaN is refused.
_encode_records = compact_encoder(item_separator=",", key_separator=":", sort_keys=False, allow_nan=False)
# CSV and .jay cells: lists and objects as JSON text with sorted keys (json.dumps(..., sort_keys=True)).
_encode_cell = compact_encoder(item_separator=", ", key_separator=": ", sort_keys=True, allow_nan=True)
_row_fields = attrgetter(*RECORD_FIELDS)


def _record(row, result, metric_keys: list[str]) -> dict[str, Any]:
    record = dict(zip(RECORD_FIELDS, _row_fields(row)))
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
        return _encode_cell(value) if value else ("[]" if isinstance(value, list) else "{}")
    return value


def _text_column(values: tuple | list) -> tuple[tuple | list, str]:
    """A text column as cells of text (lists and objects as JSON, None as ""), and the cells joined by NUL."""
    try:
        return values, "\x00".join(values)  # all text already: nothing to convert
    except TypeError:
        if values.count([]) == len(values):  # e.g. no row has a retrieved context
            cells = ["[]"] * len(values)
            return cells, "\x00".join(cells)
        cells = [_flat(v) for v in values]
        cells = [v if isinstance(v, str) else str(v) for v in cells]
        return cells, "\x00".join(cells)


# A NUL (the cell separator of a joined column) followed by a formula character. The literal
# NUL lets the regular-expression engine skip from separator to separator.
_FORMULA_AFTER_SEPARATOR = re.compile("\x00[" + re.escape("".join(FORMULA_PREFIXES)) + "]")


def _may_hold_formula(joined: str) -> bool:
    """Whether a cell of a NUL-joined column starts with a formula character (false positives only
    when a cell holds a NUL, which then costs a look at every cell)."""
    return joined.startswith(FORMULA_PREFIXES) or _FORMULA_AFTER_SEPARATOR.search(joined) is not None


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def write_eval_results(ev: ScoredEvaluator, root: Path, csv_formula_escape: bool = True,
                       judge_trust: dict[str, Any] | None = None) -> None:
    """Write the JSON, CSV and .jay files of llm-eval-results and their .meta files.

    ``csv_formula_escape``: neutralise CSV text cells a spreadsheet would run (:mod:`.csv_cells`).
    ``judge_trust``: a judge evaluator's calibration; every row then carries the judge's status in a
    ``judge_trust`` column (``untrusted``: the verdict is written but not counted), and the JSON
    file the calibration itself.
    """
    import datatable as dt  # imported here: only this writer needs it

    explanation = root / names.EVAL_RESULTS
    # Rows of several epochs keep their epoch (docs/epochs.md); a one-epoch run's files are as before.
    epochs = any(row.epoch for row, _ in ev.scored)
    # Rows of production traces keep the span their verdict goes back to (docs/traces.md).
    traced = any(row.span_id for row, _ in ev.scored)
    columns = (_columns(ev) + (["judge_trust"] if judge_trust else []) + (["epoch"] if epochs else [])
               + (_TRACE_FIELDS if traced else []))
    metric_keys = [m.key for m in ev.cls.metrics]
    numeric = {"actual_duration", "cost", *metric_keys} | ({"epoch"} if epochs else set())
    types = [dt.Type.float64 if c in numeric else dt.Type.str32 for c in columns]
    targets = {mime: explanation / names.mime_dir(mime) / f"{names.EXPLANATION_STEM}.{ext}"
               for mime, ext in ((names.MIME_JSON, "json"), (names.MIME_CSV, "csv"), (names.MIME_JAY, "jay"))}
    for target in targets.values():
        target.parent.mkdir(parents=True, exist_ok=True)
    temporary = {mime: target.with_name(target.name + ".tmp") for mime, target in targets.items()}

    head = _encode_records({"schema_version": names.SCHEMA_VERSION, "evaluator_id": ev.cls.id,
                            **({"judge_trust": judge_trust} if judge_trust else {})})
    tail = "]," + _encode_records({"metrics_meta": metric_meta(ev)})[1:] + "\n"
    # The .jay columns, gathered over the chunks: a text cell is mostly a reference to the row's
    # own string, so these lists cost a pointer per cell; one frame is built from them at the
    # end (frames per chunk, joined by rbind, would hold every text twice at the peak).
    jay_columns: dict[str, list] = {c: [] for c in columns}
    with named_open(temporary[names.MIME_JSON], "w", encoding="utf-8", newline="") as json_file, \
            named_open(temporary[names.MIME_CSV], "w", encoding="utf-8", newline="") as csv_file:
        json_file.write(head[:-1] + ',"results":[')
        writer = csv.writer(csv_file, lineterminator="\n")
        header = neutralise_row(columns) if csv_formula_escape else columns
        write_csv_rows(csv_file, writer, [tuple(header)], any("\r" in c for c in columns))
        by_column = itemgetter(*columns)
        first = True
        for chunk in _chunks(ev.scored, CHUNK_ROWS):
            records = [_record(row, result, metric_keys) for row, result in chunk]
            if judge_trust:
                for record in records:
                    record["judge_trust"] = judge_trust["status"]
            if epochs:
                for record, (row, _) in zip(records, chunk):
                    record["epoch"] = row.epoch
            if traced:
                for record, (row, _) in zip(records, chunk):
                    record["trace_id"], record["span_id"] = row.trace_id, row.span_id
            encoded = _encode_records(records)
            json_file.write(encoded[1:-1] if first else "," + encoded[1:-1])
            first = False
            del encoded
            transposed = list(zip(*map(by_column, records)))
            del records
            csv_columns: list = []
            has_cr = False
            for column, values in zip(columns, transposed):
                if column in numeric:
                    jay_columns[column] += [None if v is None else float(v) for v in values]
                    csv_columns.append(["" if v is None else v for v in values] if None in values else values)
                    continue
                cells, joined = _text_column(values)
                jay_columns[column] += cells
                has_cr = has_cr or "\r" in joined
                if csv_formula_escape and _may_hold_formula(joined):
                    cells = [neutralise_cell(v) for v in cells]
                csv_columns.append(cells)
            del transposed
            write_csv_rows(csv_file, writer, list(zip(*csv_columns)), has_cr)
            del csv_columns
        json_file.write(tail)
    # Column by column, so that each list (and the JSON text of its cells) goes as soon as
    # datatable has its copy.
    frame = dt.Frame()
    for column, stype in zip(columns, types):
        frame.cbind(dt.Frame({column: jay_columns.pop(column)}, types=[stype]))
    # "write" streams the columns to the file; the default may map the whole file in memory first.
    with naming(temporary[names.MIME_JAY]):
        frame.to_jay(str(temporary[names.MIME_JAY]), method="write")
    del frame
    for mime, target in targets.items():
        os.replace(temporary[mime], target)
        write_meta(explanation, mime, [target.name])
