"""Reading row results back as one table, from the JSON eval results or from Parquet, whichever is there.

An evaluator folder of a small run holds ``explanation.json`` (and Parquet); one above the run's
``columnar_only_above`` holds Parquet only (:mod:`.columnar`). The Parquet rows carry the keys and the
metric values; the dataset fields come from the run's one ``dataset/llm_dataset.parquet``, taken in
the evaluator's row order by ``key``. Either way a row has the columns, in the order, of the JSON
file's records, with lists and objects as Python lists and dicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from .artifacts.columnar import LIST_FIELDS, RUN_DATASET_PARQUET, evaluator_parquet

__all__ = ["rows_table", "parquet_rows"]

_loads = json.JSONDecoder().decode


def _decode(values: list) -> list:
    # Most cells are empty lists or objects: a fresh one each, without the decoder.
    return [[] if v == "[]" else {} if v == "{}" else None if v is None else _loads(v) for v in values]


def _arrow_rows(folder: Path, run_dir: Path, wanted: list[str] | None = None):
    """The evaluator's rows as an Arrow table with the JSON records' columns (``wanted``: only these, in
    this order; a name the records do not have is a ValueError), and its JSON-text columns. Only the
    columns asked for are read from either file."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = evaluator_parquet(folder)
    schema = pq.read_schema(path)
    meta = schema.metadata or {}
    columns = json.loads(meta[b"sonar.record_columns"])
    if wanted is not None:
        unknown = [c for c in wanted if c not in columns]
        if unknown:
            raise ValueError(f"no column '{unknown[0]}' in the rows of {folder.name} (columns: {', '.join(columns)})")
        columns = list(dict.fromkeys(wanted))
    from_dataset = [c for c in json.loads(meta[b"sonar.dataset_columns"]) if c in columns]
    own = [c for c in schema.names if c in columns or (c == "key" and from_dataset)]
    table = pq.read_table(path, columns=own)
    json_columns = set(json.loads(meta[b"sonar.json_columns"]))
    picked: dict[str, Any] = {}
    if from_dataset:
        dataset_path = run_dir / RUN_DATASET_PARQUET
        dataset = pq.read_table(dataset_path, columns=["key", *from_dataset])
        json_columns |= set(json.loads((dataset.schema.metadata or {}).get(b"sonar.json_columns", b"[]")))
        keys = table.column("key")
        # An evaluator that scored every row has them in the dataset's order: nothing to look up or move.
        if not keys.equals(dataset.column("key")):
            # Each evaluator row's place in the dataset copy, so the dataset columns follow the evaluator's order.
            where = pc.index_in(keys, value_set=dataset.column("key"))
            if where.null_count:
                raise ValueError(f"{dataset_path}: {where.null_count} rows of {folder.name} are not in the dataset copy")
            dataset = dataset.take(where)
        picked = {name: dataset.column(name) for name in from_dataset}
    arrays = [table.column(c) if c in table.column_names else picked[c] for c in columns]
    return pa.table(arrays, names=columns), json_columns


def parquet_rows(folder: Path, run_dir: Path, wanted: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The evaluator's rows as records (the JSON file's, or only the ``wanted`` fields), or None when its
    folder has no Parquet."""
    if not evaluator_parquet(folder).is_file():
        return None
    table, json_columns = _arrow_rows(folder, run_dir, wanted)
    data = {}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        data[name] = _decode(values) if name in json_columns else values
    return [dict(zip(data, values)) for values in zip(*data.values())]


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
    decoded[:] = _decode(encoded.dictionary.to_pylist())
    return decoded[encoded.indices.to_numpy(zero_copy_only=False)]


def _parquet_frame(folder: Path, run_dir: Path, wanted: list[str] | None = None):
    """The evaluator's rows as a pandas DataFrame: scalar columns through Arrow, lists as Arrow-backed
    list columns (``tolist()`` gives Python lists), JSON text decoded once per distinct value."""
    import pandas

    table, json_columns = _arrow_rows(folder, run_dir, wanted)
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
