"""Two runs compared, as ``sonar view`` shows them: what ``sonar compare`` concludes, per evaluator, metric and
model, and the rows that flipped, a page at a time and filtered (docs/view.md).

The comparison is :func:`sonar_core.findings.comparison.compare_runs` over the runs read by
:func:`sonar_core.artifacts.run_reader.read_run`, the path ``sonar compare`` takes; nothing here computes a
statistic. Its result is a :class:`~sonar_core.findings.comparison_types.Comparison`, read by attribute. A
comparison is made once per pair of run versions (run.json's modification time) and kept; paging and
filtering the flips read it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..artifacts.columnar import RUN_DATASET_PARQUET
from ..errors import SonarError
from ..findings.comparison_types import Comparison, MetricComparison, PairedComparison, SideMean
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
    flipped = [(ev.label_b, entry.metric, entry.model, direction, case)
               for ev in data.evaluators for entry in ev.metrics
               for direction in DIRECTIONS for case in getattr(entry.flips, direction)]
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


def _side(side: SideMean) -> dict[str, Any]:
    return {"value": side.value, "ci_low": side.ci_low, "ci_high": side.ci_high, "n": side.n, "method": side.method}


def _verdict(entry: MetricComparison) -> str:
    """``worse`` (a significant change for the worse), ``better`` (significant, the other way), ``same``
    (tested, not significant) or ``untested`` (no paired test: a model-level metric or no shared values)."""
    if entry.test is None:
        return "untested"
    if entry.regression:
        return "worse"
    return "better" if entry.significant else "same"


def _test(test: PairedComparison | None) -> dict[str, Any] | None:
    if test is None:
        return None
    return {"test": test.test, "n": test.n, "delta": test.delta, "p_value": test.p_value,
            "p_adjusted": test.p_adjusted, "correction": test.correction, "family_size": test.family_size}


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
    data: Comparison = compared["data"]
    metrics, evaluators = [], []
    for ev in data.evaluators:
        evaluators.append({"label": ev.label_b, "shared_rows": ev.shared_rows,
                           "rows_only_a": ev.rows_only_a, "rows_only_b": ev.rows_only_b})
        for entry in ev.metrics:
            metrics.append({"evaluator": ev.label_b, "metric": entry.metric, "metric_name": entry.metric_name,
                            "model": entry.model, "higher_is_better": entry.higher_is_better,
                            "a": _side(entry.a), "b": _side(entry.b), "delta": entry.delta,
                            "test": _test(entry.test), "verdict": _verdict(entry),
                            **{d: len(getattr(entry.flips, d)) for d in DIRECTIONS}})
    only = {side: [{"label": e.label, "reason": e.reason} for e in getattr(data, f"evaluators_only_{side}")]
            for side in ("a", "b")}
    return {"a": a.run_id, "b": b.run_id, "confidence_level": data.confidence_level,
            "regressions": data.regressions, "models": list(data.models),
            "models_only_a": list(data.models_only_a), "models_only_b": list(data.models_only_b),
            "test_cases_shared": data.test_cases_shared,
            "test_cases_only_a": _listed(data.test_cases_only_a),
            "test_cases_only_b": _listed(data.test_cases_only_b),
            "evaluators_only_a": only["a"], "evaluators_only_b": only["b"],
            "not_comparable": list(data.not_comparable), "partial": data.partial or {},
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
