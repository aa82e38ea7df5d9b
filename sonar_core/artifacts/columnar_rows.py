"""Reading an evaluator's row results back, from its JSON eval results or its Parquet, whichever is there.

An evaluator folder of a small run holds ``explanation.json`` (and Parquet); one above the run's
``columnar_only_above`` holds Parquet only (:mod:`.columnar`). The Parquet rows carry the keys and the
metric values; the dataset fields come from the run's one ``dataset/llm_dataset.parquet``, taken in
the evaluator's row order by ``key``. Either way a row has the columns, in the order, of the JSON
file's records, with lists and objects as Python lists and dicts. ``open_run(...).rows()``
(:mod:`sonar_core.result_rows`), ``sonar compare`` (:mod:`.run_reader`), the red-team reader
(:mod:`.redteam`) and a benchmark's tallies all read rows through here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import names
from .columnar import RUN_DATASET_PARQUET, evaluator_parquet

__all__ = ["arrow_rows", "parquet_rows", "parquet_columns", "parquet_metrics_meta", "saved_rows", "json_results_file",
           "decode_json_cells"]

_loads = json.JSONDecoder().decode


def decode_json_cells(values: list) -> list:
    """JSON-text cells as Python values. Most cells are empty lists or objects: a fresh one each, without
    the decoder."""
    return [[] if v == "[]" else {} if v == "{}" else None if v is None else _loads(v) for v in values]


def json_results_file(folder: Path) -> Path:
    """Where an evaluator folder's JSON row results are (absent above the run's ``columnar_only_above``)."""
    return folder / names.EVAL_RESULTS / names.mime_dir(names.MIME_JSON) / f"{names.EXPLANATION_STEM}.json"


def arrow_rows(folder: Path, run_dir: Path, wanted: list[str] | None = None):
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
    table, json_columns = arrow_rows(folder, run_dir, wanted)
    data = {}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        data[name] = decode_json_cells(values) if name in json_columns else values
    return [dict(zip(data, values)) for values in zip(*data.values())]


def parquet_columns(folder: Path, run_dir: Path, keys: list[str]) -> dict[str, list] | None:
    """The ``keys`` columns of the evaluator's Parquet rows as lists, as a ``.jay`` file gives them: JSON
    columns (``details``) as their text, a column the rows do not have all None; None when the folder has
    no Parquet."""
    path = evaluator_parquet(folder)
    if not path.is_file():
        return None
    import pyarrow.parquet as pq

    known = set(json.loads((pq.read_schema(path).metadata or {})[b"sonar.record_columns"]))
    table, _ = arrow_rows(folder, run_dir, [c for c in dict.fromkeys(keys) if c in known])
    return {c: table.column(c).to_pylist() if c in known else [None] * table.num_rows for c in keys}


def parquet_metrics_meta(folder: Path) -> list[dict[str, Any]] | None:
    """``metrics_meta`` of the evaluator's rows (what explanation.json ends with), from the Parquet file's
    metadata; None when the folder has no Parquet."""
    path = evaluator_parquet(folder)
    if not path.is_file():
        return None
    import pyarrow.parquet as pq

    return json.loads((pq.read_schema(path).metadata or {})[b"sonar.metrics_meta"])


def saved_rows(folder: Path, run_dir: Path, wanted: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The evaluator's row records: explanation.json's ``results`` when the folder has it, else its Parquet
    rows (only the ``wanted`` fields; a field Parquet rows do not have is a ValueError); None when the folder
    holds neither. An unreadable JSON file raises as ``json.loads`` does."""
    path = json_results_file(folder)
    if path.is_file():
        rows = json.loads(path.read_text(encoding="utf-8"))["results"]
        return rows if wanted is None else [{c: row.get(c) for c in wanted} for row in rows]
    return parquet_rows(folder, run_dir, wanted)
