"""What ``sonar view`` shows, as plain data: the runs under the given folders, and one run's test cases a
page at a time, searched and filtered in DuckDB over the run's Parquet files (docs/view.md).

A run is known by an id made here (its folder name, numbered when two folders share one); only
folders found under the given roots ever get an id, so no request can name a path outside them.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import names
from ..artifacts.columnar import RUN_DATASET_PARQUET, evaluator_parquet

__all__ = ["Run", "find_runs", "run_summary", "cases", "metric_columns", "evaluator_files", "connection", "sort_key",
           "PAGE_SIZE", "SORTS"]

#: Test cases per page.
PAGE_SIZE = 50
#: Dataset columns a page may be sorted by; besides these, ``EVALUATOR.METRIC`` (one of that evaluator's
#: Parquet metric columns). Anything else is refused, never put into SQL.
SORTS = ("key", "test_case_key", "model_key", "input", "actual_output")
#: Folder depth searched under each root for run folders (a run folder holds run.json).
_DEPTH = 3


_database = None
_database_lock = threading.Lock()


def connection():
    """A DuckDB connection of its own (close it) to one in-memory database shared by every request:
    opening a database costs 0.1 s or more, a cursor on an open one almost nothing."""
    import duckdb

    global _database
    with _database_lock:
        if _database is None:
            _database = duckdb.connect()
        return _database.cursor()


@dataclass(frozen=True)
class Run:
    run_id: str
    folder: Path


def find_runs(roots: list[Path]) -> dict[str, Run]:
    """Every run folder (one with run.json) at most a few levels under ``roots``, by id."""
    found: dict[str, Run] = {}
    for root in roots:
        root = root.resolve()
        candidates = [root] + [p for depth in range(1, _DEPTH + 1) for p in sorted(root.glob("/".join(["*"] * depth)))]
        for folder in candidates:
            if not (folder / names.RUN_JSON).is_file() or not folder.resolve().is_relative_to(root):
                continue
            run_id, n = folder.name, 2
            while run_id in found:
                run_id, n = f"{folder.name}-{n}", n + 1
            found[run_id] = Run(run_id, folder.resolve())
    return found


try:
    from orjson import loads as _loads  # twice the standard parser's speed on a run.json of 100 MB
except ImportError:  # pragma: no cover - orjson comes with the view extra
    _loads = json.loads


@lru_cache(maxsize=16)
def _read_record(path: str, modified_ns: int) -> dict[str, Any]:
    # run.json names every failing row in its problems (tens of MB at a million rows): parsed once per version.
    return _loads(Path(path).read_bytes())


def _record(run: Run) -> dict[str, Any]:
    path = run.folder / names.RUN_JSON
    return _read_record(str(path), path.stat().st_mtime_ns)


def run_summary(run: Run) -> dict[str, Any]:
    """A run for the history: date, dataset, models, status, evaluators, best model, HIGH problems."""
    record = _record(run)
    result = record.get("result", {})
    dataset = result.get("dataset", {})
    return {"id": run.run_id, "created": record.get("created", ""), "status": record.get("status", ""),
            "dataset": str(dataset.get("source", "")), "rows": (dataset.get("shape") or [None])[0],
            "models": result.get("models", []), "best_model": (result.get("overall_result") or {}).get("best_model"),
            "evaluators": [e.get("name", "") for e in result.get("executed_explainers", [])],
            "high_severity_problems": (result.get("overall_result") or {}).get("high_severity_problems", 0),
            "parquet": (run.folder / RUN_DATASET_PARQUET).is_file()}


def evaluator_files(run: Run) -> dict[str, Path]:
    """Each evaluator's Parquet rows in the run, by label (only files inside the run folder)."""
    record = _record(run)
    files = {}
    for entry in record.get("result", {}).get("executed_explainers", []):
        folder = (run.folder / entry.get("job_location", "")).resolve()
        path = evaluator_parquet(folder)
        if folder.is_relative_to(run.folder) and path.is_file():
            files[entry.get("name", folder.name)] = path
    return files


def metric_columns(path: Path) -> list[str]:
    """The metric columns (float64) of an evaluator's Parquet rows, from its schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return [f.name for f in pq.read_schema(path) if f.type == pa.float64()]


def sort_key(run: Run, sort: str, files: dict[str, Path] | None = None) -> tuple[str, str] | None:
    """``sort`` checked against what the run has: None for one of :data:`SORTS`, else ``(evaluator, metric)``
    for ``EVALUATOR.METRIC`` naming one of the evaluator's metric columns; ValueError (one line) otherwise."""
    if sort in SORTS:
        return None
    files = evaluator_files(run) if files is None else files
    for label in sorted(files, key=len, reverse=True):  # the longest label first: labels may hold dots
        if sort.startswith(label + ".") and sort[len(label) + 1:] in metric_columns(files[label]):
            return label, sort[len(label) + 1:]
    example = next((f"{label}.{metric_columns(path)[0]}" for label, path in sorted(files.items())
                    if metric_columns(path)), "EVALUATOR.METRIC")
    raise ValueError(f"sort: one of {', '.join(SORTS)} or EVALUATOR.METRIC naming a metric of the run "
                     f"(e.g. {example}); got '{sort[:60]}'")


_SHOWN = "d.key, d.test_case_key, d.model_key, d.input, d.expected_output, d.actual_output"


def _sorted_by_metric(con, dataset: str, scored: str, metric: str, join: str, where: list[str], params: list,
                      descending: bool, limit: str) -> tuple[int | None, list[dict[str, Any]]]:
    """A page of rows ordered by ``metric`` of the evaluator rows in ``scored`` (then by key), each with its
    ``sort_value``; rows the evaluator did not score (NULL) come last whichever the order. The page's keys
    are found from the key and metric columns only and their text read after (ordering the joined text of
    every row cost twice the time at a million rows). With a filter, the rows it keeps are found once for
    both the page and the count (a search reads four text columns of every row). Returns ``(total, rows)``,
    total None when the count was not made (no filter, or an empty page)."""
    way = f"{'DESC' if descending else 'ASC'} NULLS LAST"
    kept = (f'SELECT d.key AS key, s."{metric}" AS sort_value FROM read_parquet(?) d '
            f"LEFT JOIN read_parquet(?) s ON s.key = d.key {join} WHERE {' AND '.join(where)}")
    text = f"SELECT {_SHOWN}, page.sort_value FROM page JOIN read_parquet(?) d ON d.key = page.key"
    filtered = len(where) > 1 or bool(join)
    if filtered:
        sql = (f"WITH f AS MATERIALIZED ({kept}), page AS (SELECT key, sort_value FROM f ORDER BY sort_value {way}, "
               f"key {limit}) SELECT (SELECT count(*) FROM f) AS total, {text[len('SELECT '):]} "
               f"ORDER BY page.sort_value {way}, page.key")
    else:
        sql = f"WITH page AS ({kept} ORDER BY sort_value {way}, key {limit}) {text} ORDER BY page.sort_value {way}, page.key"
    cursor = con.execute(sql, [dataset, scored] + params + [dataset])
    columns = [c[0] for c in cursor.description]
    rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
    total = rows[0]["total"] if filtered and rows else None
    for row in rows:
        row.pop("total", None)
    return total, rows


def cases(run: Run, q: str = "", page: int = 1, model: str = "", evaluator: str = "", failing: bool = False,
          sort: str = "key", descending: bool = False, metric: str = "", low: float | None = None,
          high: float | None = None, category: str = "") -> dict[str, Any]:
    """One page of a run's rows: ``{total, page, page_size, rows}``.

    ``q``: text searched (case-insensitive) in the question, the answer, the expected answer and the
    keys; ``model``: one model; ``evaluator`` with ``failing``: only rows whose value of that evaluator's
    pass metric is 0 (``model_passes`` and the like, where the evaluator has one); ``evaluator`` with
    ``metric``: only rows whose value of that metric is at least ``low`` and at most ``high`` (either
    may be None: unbounded); ``category``: rows whose ``categories`` hold it. Every value is a query
    parameter; ``sort`` must be one of :data:`SORTS` or ``EVALUATOR.METRIC`` (:func:`sort_key`; rows the
    evaluator did not score come last either way, and each row then carries its ``sort_value``), and
    ``metric`` one of the evaluator's Parquet columns.
    """
    files = evaluator_files(run)
    by_metric = sort_key(run, sort, files)
    dataset = run.folder / RUN_DATASET_PARQUET
    if not dataset.is_file():
        raise FileNotFoundError(f"{run.run_id}: no {RUN_DATASET_PARQUET} (a run written without the columnar extra)")
    page = max(1, int(page))
    where, params = ["TRUE"], []
    if q:
        where.append("(d.input ILIKE ? OR d.actual_output ILIKE ? OR d.expected_output ILIKE ? OR d.key ILIKE ?)")
        params += [f"%{q}%"] * 4
    if model:
        where.append("d.model_key = ?")
        params.append(model)
    if category:
        where.append("list_contains(d.categories, ?)")
        params.append(category)
    join = ""
    if evaluator:
        if evaluator not in files:
            raise KeyError(f"no evaluator '{evaluator}' with Parquet rows in run {run.run_id}")
        join = "JOIN read_parquet(?) e ON e.key = d.key"
        params = [str(files[evaluator])] + params
        if failing:
            import pyarrow.parquet as pq

            if "model_passes" not in pq.read_schema(files[evaluator]).names:
                raise ValueError(f"evaluator '{evaluator}' has no pass/fail metric (model_passes)")
            where.append("e.model_passes = 0")
        if metric:
            if metric not in metric_columns(files[evaluator]):
                raise ValueError(f"evaluator '{evaluator}' has no metric '{metric}'")
            for bound, op in ((low, ">="), (high, "<=")):
                if bound is not None:
                    where.append(f'e."{metric}" {op} ?')  # a column name from the file's own schema
                    params.append(float(bound))
    elif metric or failing:
        raise ValueError("failing and metric need an evaluator")
    con = connection()
    try:
        base = f"FROM read_parquet(?) d {join} WHERE {' AND '.join(where)}"
        all_params = [str(dataset)] + params
        count = f"SELECT count(*) {base}"
        limit = f"LIMIT {PAGE_SIZE} OFFSET {(page - 1) * PAGE_SIZE}"
        if by_metric is None:
            total = con.execute(count, all_params).fetchone()[0]
            cursor = con.execute(f"SELECT {_SHOWN} {base} ORDER BY d.{sort} {'DESC' if descending else 'ASC'}, d.key "
                                 f"{limit}", all_params)
            columns = [c[0] for c in cursor.description]
            rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
        else:
            total, rows = _sorted_by_metric(con, str(dataset), str(files[by_metric[0]]), by_metric[1], join, where,
                                            params, descending, limit)
            if total is None:  # nothing on this page: the count alone
                total = con.execute(count, all_params).fetchone()[0]
    finally:
        con.close()
    return {"run": run.run_id, "total": total, "page": page, "page_size": PAGE_SIZE, "rows": rows,
            "evaluators": sorted(files), "sort": sort, "order": "desc" if descending else "asc"}
