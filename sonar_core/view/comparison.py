"""Two runs compared, as ``sonar view`` shows them: what ``sonar compare`` concludes, per evaluator, metric and
model, and the rows that flipped, a page at a time and filtered (docs/view.md).

The comparison is :func:`sonar_core.findings.comparison.compare_runs` over the runs read by
:func:`sonar_core.artifacts.run_reader.read_run`, the path ``sonar compare`` takes; nothing here computes a
statistic. Its result is read only through :func:`_get` (a key of a dict or an attribute of an object of the
same names), so the result may become dataclasses without this module changing. A comparison is made once
per pair of run versions (run.json's modification time) and kept; paging and filtering the flips read it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..artifacts.columnar import RUN_DATASET_PARQUET
from ..errors import SonarError
from .queries import Run, connection

__all__ = ["comparison", "flips", "DIRECTIONS", "FLIPS_PAGE_SIZE", "LISTED"]

#: Flipped rows per page.
FLIPS_PAGE_SIZE = 50
#: The two ways a row flips: passing in A and failing in B, or the reverse.
DIRECTIONS = ("pass_to_fail", "fail_to_pass")
#: Names listed of what is in one run only (test cases, ...); the count says how many in all.
LISTED = 50
#: Comparisons kept (each holds its flip lists; a million-row pair's is tens of MB).
_KEPT = 4

_cache: OrderedDict[tuple, dict[str, Any]] = OrderedDict()
_cache_lock = threading.Lock()


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of compare_runs' result: a dict's key or an object's attribute."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _version(run: Run) -> tuple[str, int]:
    from .. import names

    return str(run.folder), (run.folder / names.RUN_JSON).stat().st_mtime_ns


def _compute(a: Run, b: Run) -> dict[str, Any]:
    from ..artifacts.run_reader import read_run
    from ..findings.comparison import IncompatibleRuns, compare_runs

    try:
        data = compare_runs(read_run(a.folder), read_run(b.folder))
    except IncompatibleRuns as exc:
        raise ValueError(f"{a.run_id} and {b.run_id} cannot be compared: {exc}") from None
    except SonarError as exc:
        raise ValueError(f"{a.run_id} and {b.run_id} cannot be compared: {str(exc).splitlines()[0]}") from None
    # Every flip once, in the comparison's order: (evaluator, metric, model, direction, test case).
    flipped = [(_get(ev, "label_b"), _get(entry, "metric"), _get(entry, "model"), direction, case)
               for ev in _get(data, "evaluators", []) for entry in _get(ev, "metrics", [])
               for direction in DIRECTIONS for case in _get(_get(entry, "flips", {}), direction, [])]
    return {"data": data, "flips": flipped}


def _compared(a: Run, b: Run) -> dict[str, Any]:
    """The comparison of ``a`` (before) and ``b`` (after), made once per version of the two runs."""
    key = (_version(a), _version(b))
    with _cache_lock:  # one comparison at a time: two requests for one pair wait for the first
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        found = _cache[key] = _compute(a, b)
        while len(_cache) > _KEPT:
            _cache.popitem(last=False)
        return found


def _side(side: Any) -> dict[str, Any]:
    return {name: _get(side, name) for name in ("value", "ci_low", "ci_high", "n", "method")}


def _verdict(entry: Any) -> str:
    """``worse`` (a significant change for the worse), ``better`` (significant, the other way), ``same``
    (tested, not significant) or ``untested`` (no paired test: a model-level metric or no shared values)."""
    if _get(entry, "test") is None:
        return "untested"
    if _get(entry, "regression"):
        return "worse"
    return "better" if _get(entry, "significant") else "same"


def _test(test: Any) -> dict[str, Any] | None:
    if test is None:
        return None
    return {name: _get(test, name) for name in ("test", "n", "delta", "p_value", "p_adjusted", "correction",
                                                "family_size")}


def _listed(items: list) -> dict[str, Any]:
    return {"count": len(items), "first": list(items[:LISTED])}


def comparison(a: Run, b: Run) -> dict[str, Any]:
    """``{a, b, confidence_level, regressions, models, models_only_a/_b, test_cases_shared,
    test_cases_only_a/_b: {count, first}, evaluators_only_a/_b: [{label, reason}], not_comparable, partial,
    evaluators: [{label, shared_rows, rows_only_a, rows_only_b}], metrics: [{evaluator, metric, metric_name,
    model, higher_is_better, a, b, delta, test, verdict, pass_to_fail, fail_to_pass}], flips}``: what
    ``sonar compare`` concludes, the flips counted (:func:`flips` lists them). ValueError (one line) when the
    runs cannot be compared or read."""
    compared = _compared(a, b)
    data = compared["data"]
    metrics, evaluators = [], []
    for ev in _get(data, "evaluators", []):
        evaluators.append({"label": _get(ev, "label_b"), "shared_rows": _get(ev, "shared_rows"),
                           "rows_only_a": _get(ev, "rows_only_a"), "rows_only_b": _get(ev, "rows_only_b")})
        for entry in _get(ev, "metrics", []):
            flipped = _get(entry, "flips", {})
            metrics.append({"evaluator": _get(ev, "label_b"), "metric": _get(entry, "metric"),
                            "metric_name": _get(entry, "metric_name"), "model": _get(entry, "model"),
                            "higher_is_better": _get(entry, "higher_is_better"),
                            "a": _side(_get(entry, "a")), "b": _side(_get(entry, "b")),
                            "delta": _get(entry, "delta"), "test": _test(_get(entry, "test")),
                            "verdict": _verdict(entry),
                            **{d: len(_get(flipped, d, [])) for d in DIRECTIONS}})
    only = {side: [{"label": _get(e, "label"), "reason": _get(e, "reason")}
                   for e in _get(data, f"evaluators_only_{side}", [])] for side in ("a", "b")}
    return {"a": a.run_id, "b": b.run_id, "confidence_level": _get(data, "confidence_level"),
            "regressions": _get(data, "regressions"), "models": list(_get(data, "models", [])),
            "models_only_a": list(_get(data, "models_only_a", [])), "models_only_b": list(_get(data, "models_only_b", [])),
            "test_cases_shared": _get(data, "test_cases_shared"),
            "test_cases_only_a": _listed(_get(data, "test_cases_only_a", [])),
            "test_cases_only_b": _listed(_get(data, "test_cases_only_b", [])),
            "evaluators_only_a": only["a"], "evaluators_only_b": only["b"],
            "not_comparable": list(_get(data, "not_comparable") or []), "partial": _get(data, "partial") or {},
            "evaluators": evaluators, "metrics": metrics, "flips": len(compared["flips"])}


def _row_keys(run: Run, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Each (test case, model)'s row key in ``run`` (its case page's key), in one query over its dataset copy;
    empty when the run has no Parquet copy (its cases cannot be opened in the viewer)."""
    dataset = run.folder / RUN_DATASET_PARQUET
    if not pairs or not dataset.is_file():
        return {}
    con = connection()
    try:
        found = con.execute("SELECT test_case_key, model_key, min(key) FROM read_parquet(?) "
                            "WHERE list_contains(?, test_case_key) AND list_contains(?, model_key) GROUP BY ALL",
                            [str(dataset), sorted({c for c, _ in pairs}), sorted({m for _, m in pairs})]).fetchall()
    finally:
        con.close()
    return {(c, m): key for c, m, key in found}


def flips(a: Run, b: Run, evaluator: str = "", metric: str = "", model: str = "", direction: str = "",
          page: int = 1) -> dict[str, Any]:
    """One page of the rows that flipped: ``{a, b, total, page, page_size, flips: [{evaluator, metric, model,
    direction, test_case_key, key_a, key_b}]}``, filtered by evaluator label, metric, model and direction (each
    empty: all). ``key_a``/``key_b``: the row's key in each run, for its case page (None: not in that run's
    Parquet copy). ValueError (one line) for an unknown direction or runs that cannot be compared."""
    if direction and direction not in DIRECTIONS:
        raise ValueError(f"direction: one of {', '.join(DIRECTIONS)}")
    page = max(1, int(page))
    wanted = [f for f in _compared(a, b)["flips"]
              if (not evaluator or f[0] == evaluator) and (not metric or f[1] == metric)
              and (not model or f[2] == model) and (not direction or f[3] == direction)]
    shown = wanted[(page - 1) * FLIPS_PAGE_SIZE:page * FLIPS_PAGE_SIZE]
    pairs = [(case, mod) for _, _, mod, _, case in shown]
    keys_a, keys_b = _row_keys(a, pairs), _row_keys(b, pairs)
    return {"a": a.run_id, "b": b.run_id, "total": len(wanted), "page": page, "page_size": FLIPS_PAGE_SIZE,
            "flips": [{"evaluator": ev, "metric": met, "model": mod, "direction": d, "test_case_key": case,
                       "key_a": keys_a.get((case, mod)), "key_b": keys_b.get((case, mod))}
                      for ev, met, mod, d, case in shown]}
