"""The epoch reducers: one value per metric from the values of one test case's epochs.

For a test case asked ``n`` times (the run's epochs), per metric, with the epochs that have a value:

- ``mean``: the mean of those values (a missing epoch is left out; no value when none has one);
- ``majority``: the lower median of those values ordered worst to best (position (m - 1) // 2 of the m
  values present): a passing value when more than half of the scored epochs pass, a failing one
  on a tie (2 of 4 passing fails); missing epochs are left out;
- ``pass_at_k`` / ``pass_hat_k`` (k = n): the best / the worst of the n values, on the metric's own
  scale: its verdict is pass@n (some epoch passes) / pass^n (every epoch passes). With an epoch
  missing there is no value: whether the missing epoch would have passed decides both;
- ``pass_at_K`` / ``pass_hat_K`` with K < n: Inspect's unbiased estimators over the m epochs that
  have a value, c of them passing: pass@K = 1 - C(m - c, K) / C(m, K) (the chance that K epochs drawn
  without replacement hold a pass) and pass^K = C(c, K) / C(m, K) (that all K pass), computed exactly
  from the integers and rounded once. No value when fewer than K epochs have one (Inspect: NaN).
  The value is that chance p for a higher-is-better metric and 1 - p for a lower-is-better one (the
  chance that a draw fails), so a 0/1 metric keeps its meaning; a metric without a threshold (no
  verdict) is averaged.

A model-level metric (one value for a model's whole set of rows) is always averaged.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..contract import Metric
from ..epoch_names import EpochReducer, parse_epoch_reducer

__all__ = ["reduce_values", "pass_at", "pass_hat", "present_values", "unscored_reason"]


def present_values(values: list[float | None]) -> list[float]:
    """The values that are there (None and NaN left out)."""
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def _exact(kind: str, n: int, c: int, k: int) -> Fraction:
    if kind == "pass_hat":
        return Fraction(math.comb(c, k), math.comb(n, k))
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_at(n: int, c: int, k: int) -> float:
    """pass@k of ``c`` passing epochs among ``n``: 1 - C(n - c, k) / C(n, k), exact then rounded (k <= n)."""
    return float(_exact("pass_at", n, c, k))


def pass_hat(n: int, c: int, k: int) -> float:
    """pass^k of ``c`` passing epochs among ``n``: C(c, k) / C(n, k), exact then rounded (k <= n)."""
    return float(_exact("pass_hat", n, c, k))


def _verdict(metric: Metric, threshold: float | None) -> bool:
    """Whether the metric's values are verdicts: a finite threshold in force, one value per row."""
    limit = metric.threshold if threshold is None else threshold
    return not metric.model_level and math.isfinite(limit)


def reduce_values(metric: Metric, values: list[float | None], reducer: str | EpochReducer,
                  epochs: int | None = None, threshold: float | None = None) -> float | None:
    """One value from a test case's epochs (see the module docstring); None when there is none.

    ``values``: the values of the epochs that have a row (None or NaN: the row has no value);
    ``epochs``: the run's number of epochs (default: one per value); ``threshold``: the threshold in
    force for ``metric`` (default: its own).
    """
    parsed = parse_epoch_reducer(reducer) if isinstance(reducer, str) else reducer
    present = present_values(values)
    n = len(values) if epochs is None else epochs
    if not present:
        return None
    if parsed.kind == "mean" or metric.model_level:
        return math.fsum(present) / len(present)
    worst_first = sorted(present, key=lambda v: v if metric.higher_is_better else -v)
    if parsed.kind == "majority":
        return worst_first[(len(worst_first) - 1) // 2]
    k = parsed.k_for(n)
    if len(present) < k:
        return None  # fewer epochs scored than the reducer draws: no pass, no fail
    if k >= n:  # every epoch, all scored: a real epoch's value, whose verdict is the reducer's
        return worst_first[0] if parsed.kind == "pass_hat" else worst_first[-1]
    if not _verdict(metric, threshold):
        return math.fsum(present) / len(present)
    passes = sum(1 for v in present if not metric.fails(v, threshold))
    chance = _exact(parsed.kind, len(present), passes, k)
    return float(chance if metric.higher_is_better else 1 - chance)


def unscored_reason(reducer: EpochReducer, scored: int, epochs: int, missing: list[str]) -> str:
    """Why a pass reducer gave a test case no value: ``scored`` (at least one) of ``epochs`` epochs have
    one; ``missing`` says what happened to each of the others ("epoch 2: skipped, empty 'expected_answer'")."""
    what = "; ".join(missing)
    k = reducer.k_for(epochs)
    need = f"all {epochs} epochs" if k >= epochs else f"at least {k} of the {epochs} epochs"
    return f"{reducer.label()} needs {need} scored; {scored} were ({what})"
