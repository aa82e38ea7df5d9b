"""Reading row results back as one table (``open_run(...).rows()``), from the JSON eval results or from
Parquet, whichever is there (the Parquet reader, shared with every other reader of rows, is
:mod:`.artifacts.columnar_rows`).

An evaluator folder of a small run holds ``explanation.json`` (and Parquet); one above the run's
``columnar_only_above`` holds Parquet only (:mod:`.columnar`). The Parquet rows carry the keys and the
metric values; the dataset fields come from the run's one ``dataset/llm_dataset.parquet``, taken in
the evaluator's row order by ``key``. Either way a row has the columns, in the order, of the JSON
file's records, with lists and objects as Python lists and dicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .artifacts.columnar import LIST_FIELDS, evaluator_parquet
from .artifacts.columnar_rows import arrow_rows, decode_json_cells, parquet_rows

__all__ = ["rows_table", "parquet_rows"]


def _object_values(column, is_json: bool):
    """A column of lists, JSON text or only nulls as an object array, with no Python loop per cell.

    JSON text is decoded once per distinct text; rows with equal text share the decoded object
    (a million rows mostly hold a few distinct ``details``).
    """
    import numpy
    import pyarrow.compute as pc

    n = len(column)
    if column.null_count == n:
        return numpy.full(n, None, dtype=object)
    if not is_json:
        return column.to_pylist()
    encoded = pc.dictionary_encode(column.combine_chunks())
    decoded = numpy.empty(len(encoded.dictionary), dtype=object)
    decoded[:] = decode_json_cells(encoded.dictionary.to_pylist())
    return decoded[encoded.indices.to_numpy(zero_copy_only=False)]


def _parquet_frame(folder: Path, run_dir: Path, wanted: list[str] | None = None):
    """The evaluator's rows as a pandas DataFrame: scalar columns through Arrow, lists as Arrow-backed
    list columns (``tolist()`` gives Python lists), JSON text decoded once per distinct value."""
    import pandas

    table, json_columns = arrow_rows(folder, run_dir, wanted)
    empty = [c for c in table.column_names if table.column(c).null_count == len(table) and len(table)]
    lists = [c for c in table.column_names if c in LIST_FIELDS and c not in empty]
    objects = [c for c in table.column_names if c in json_columns or c in empty]
    frame = table.drop_columns(objects + lists).to_pandas()
    for name in lists:
        frame[name] = pandas.Series(pandas.arrays.ArrowExtensionArray(table.column(name)), index=frame.index)
    for name in objects:
        frame[name] = _object_values(table.column(name), name in json_columns)
    return frame[table.column_names]


def _only(rows: list[dict[str, Any]], wanted: list[str] | None, folder: Path) -> list[dict[str, Any]]:
    """JSON records cut to the ``wanted`` fields (a field no record has is a ValueError)."""
    if wanted is None:
        return rows
    known = dict.fromkeys(key for row in rows[:1] for key in row)
    unknown = [c for c in wanted if c not in known] if rows else []
    if unknown:
        raise ValueError(f"no column '{unknown[0]}' in the rows of {folder.name} (columns: {', '.join(known)})")
    return [{c: row.get(c) for c in wanted} for row in rows]


def rows_table(run_dir: Path, entries: list[dict[str, Any]], read_json: Callable[[dict], dict | None],
               frame: Callable, wanted: list[str] | None = None):
    """One table of every entry's rows (``{label, folder}``), an ``evaluator`` column first.

    ``read_json(entry)``: the evaluator's JSON eval results or None; used when present, so a small run
    reads as it always did. ``frame(records, columns)``: the caller's table maker, for the JSON-only case.
    ``wanted``: only these columns (after ``evaluator``), read alone from the Parquet files; a name the
    rows do not have is a ValueError.
    """
    parts: list[tuple[str, Path, Any]] = []  # (label, folder, JSON records or None: Parquet)
    for entry in entries:
        saved = read_json(entry)
        if saved is not None:
            parts.append((entry["label"], entry["folder"], _only(saved.get("results", []), wanted, entry["folder"])))
        elif evaluator_parquet(entry["folder"]).is_file():
            parts.append((entry["label"], entry["folder"], None))
    columns: dict[str, None] = {"evaluator": None}
    if wanted is not None:
        columns.update(dict.fromkeys(wanted))
    if all(rows is not None for _, _, rows in parts):
        records = []
        for label, _, rows in parts:
            for row in rows:
                columns.update(dict.fromkeys(row))
                records.append({"evaluator": label, **row})
        return frame(records, list(columns))
    try:
        import pandas
    except ImportError:  # datatable: records for every evaluator
        records = []
        for label, folder, rows in parts:
            for row in rows if rows is not None else parquet_rows(folder, run_dir, wanted) or []:
                columns.update(dict.fromkeys(row))
                records.append({"evaluator": label, **row})
        return frame(records, list(columns))
    frames = []
    for label, folder, rows in parts:
        part = pandas.DataFrame.from_records(rows) if rows is not None else _parquet_frame(folder, run_dir, wanted)
        part.insert(0, "evaluator", label)
        columns.update(dict.fromkeys(part.columns))
        frames.append(part)
    joined = frames[0] if len(frames) == 1 else pandas.concat(frames, ignore_index=True)
    return joined.reindex(columns=list(columns))
