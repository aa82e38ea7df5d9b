"""One test case of a run as ``sonar view``'s case page shows it, and what a run's rows can be filtered by.

The case: its dataset fields (question, answer, expected answer, retrieved context, conversation turns
where the run's dataset copy has them) and every evaluator's values for that row, read in one DuckDB
query over the run's Parquet files (docs/view.md). The key is a query parameter, never part of the SQL.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..artifacts.columnar import RUN_DATASET_PARQUET
from .queries import Run, connection, evaluator_files, metric_columns

__all__ = ["case", "filters", "CATEGORY_LIMIT"]

#: Categories offered as a filter (a dataset with more lists the most frequent ones).
CATEGORY_LIMIT = 200
#: Dataset fields of the case page, in the order shown; ``conversation`` only where the copy has it.
CASE_FIELDS = ("key", "test_case_key", "model_key", "input", "expected_output", "actual_output", "context",
               "categories", "output_condition", "perturbation", "original_test_case_key")
_DROPPED = ("key", "test_case_key", "model_key")  # repeated in every evaluator's row: the dataset's are shown


def _dataset(run: Run) -> Path:
    path = run.folder / RUN_DATASET_PARQUET
    if not path.is_file():
        raise FileNotFoundError(f"{run.run_id}: no {RUN_DATASET_PARQUET} (a run written without the columnar extra)")
    return path


def _decoded(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def case(run: Run, key: str) -> dict[str, Any]:
    """``{run, key, row: {field: value}, conversation: [turn] | None, evaluators: [{evaluator, values,
    error, details}]}`` for the row ``key``; KeyError when the run has no such row."""
    import pyarrow.parquet as pq

    dataset = _dataset(run)
    has_turns = "conversation" in pq.read_schema(dataset).names
    files = evaluator_files(run)
    labels = sorted(files)
    fields = ", ".join(f"d.{f}" for f in CASE_FIELDS) + (", d.conversation" if has_turns else "")
    # One query: the dataset row, and each evaluator's row for the key as one JSON object (NULL: not scored).
    # Each file is filtered by the key itself (not by d.key), so DuckDB skips row groups by their key range.
    scored = "".join(f", (SELECT to_json(e) FROM read_parquet(?) e WHERE e.key = ?) AS ev{i}"
                     for i in range(len(labels)))
    params = [value for label in labels for value in (str(files[label]), key)] + [str(dataset), key]
    con = connection()
    try:
        cursor = con.execute(f"SELECT {fields}{scored} FROM read_parquet(?) d WHERE d.key = ?", params)
        names = [c[0] for c in cursor.description]
        found = cursor.fetchone()
    finally:
        con.close()
    if found is None:
        raise KeyError(f"no row '{key}' in run {run.run_id}")
    values = dict(zip(names, found))
    row = {f: values[f] for f in CASE_FIELDS}
    evaluators = []
    for i, label in enumerate(labels):
        record = _decoded(values[f"ev{i}"])
        if record is None:
            continue
        for name in _DROPPED:
            record.pop(name, None)
        error = record.pop("result_error_message", "") or ""
        details = _decoded(record.pop("details", None))
        record.pop("actual_output_meta", None)
        evaluators.append({"evaluator": label, "values": record, "error": error, "details": details})
    return {"run": run.run_id, "key": key, "row": row,
            "conversation": _decoded(values.get("conversation")) if has_turns else None, "evaluators": evaluators}


@lru_cache(maxsize=16)
def _categories(path: str, modified_ns: int) -> list[str]:
    con = connection()
    try:
        found = con.execute("SELECT c, count(*) AS n FROM (SELECT unnest(categories) AS c FROM read_parquet(?)) "
                            f"GROUP BY c ORDER BY n DESC, c LIMIT {CATEGORY_LIMIT}", [path]).fetchall()
    finally:
        con.close()
    return sorted(c for c, _ in found)


def filters(run: Run) -> dict[str, Any]:
    """What the run's rows can be filtered by: ``{evaluators: {label: [metric]}, categories: [name]}``
    (categories: the most frequent :data:`CATEGORY_LIMIT`, sorted; empty when the dataset has none)."""
    dataset = _dataset(run)
    metrics = {label: metric_columns(path) for label, path in sorted(evaluator_files(run).items())}
    return {"run": run.run_id, "evaluators": metrics,
            "categories": _categories(str(dataset), dataset.stat().st_mtime_ns)}
