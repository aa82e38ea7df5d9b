"""The run's quality / cost / speed trade-off: each model's share of checks passed over every
evaluator, against its mean cost and time per answer, and the Pareto fronts of the three."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from .types import Leaderboard, TradeoffRow

__all__ = ["pareto_front", "tradeoff_rows", "with_fronts"]


def pareto_front(points: Mapping[str, Sequence[float]], minimise: Sequence[bool]) -> list[str]:
    """Names of the points no other point dominates, in the mapping's order.

    A point dominates another when it is at least as good on every axis and strictly better
    on one; ``minimise[k]`` says whether smaller is better on axis ``k``. Equal points do not
    dominate each other, so both stay on the front.
    """
    signed = {name: [(v if low else -v) for v, low in zip(p, minimise)] for name, p in points.items()}

    def dominates(a: list[float], b: list[float]) -> bool:
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return [name for name, p in signed.items() if not any(dominates(q, p) for other, q in signed.items() if other != name)]


def tradeoff_rows(boards: Iterable[Leaderboard], stats: Mapping[str, Mapping[str, Any]]) -> tuple[TradeoffRow, ...]:
    """One row per model with rows checked, by name: its passes summed over ``boards``, the quality
    they make, its mean seconds and cost per answer from ``stats``
    (:func:`~sonar_core.findings.model_stats` of the dataset's rows), and the fronts it is on."""
    totals: dict[str, list[int]] = {}
    for board in boards:
        for model, (passed, checked) in board.pass_counts.items():
            entry = totals.setdefault(model, [0, 0])
            entry[0] += passed
            entry[1] += checked
    return with_fronts([TradeoffRow(model=model, passed=passed, checked=checked, quality=passed / checked,
                                    seconds=stats.get(model, {}).get("mean_time"),
                                    cost=stats.get(model, {}).get("mean_cost"))
                        for model, (passed, checked) in sorted(totals.items()) if checked])


def with_fronts(rows: Sequence[TradeoffRow]) -> tuple[TradeoffRow, ...]:
    """``rows`` with their ``front_*`` flags set: quality (higher is better) against cost, against
    time, and against both (lower is better); a row without a measure is on no front that needs it."""
    front_cost = set(pareto_front({r.model: (r.cost, r.quality) for r in rows if r.cost is not None}, (True, False)))
    front_time = set(pareto_front({r.model: (r.seconds, r.quality) for r in rows if r.seconds is not None},
                                  (True, False)))
    front_all = set(pareto_front({r.model: (r.cost, r.seconds, r.quality) for r in rows
                                  if r.cost is not None and r.seconds is not None}, (True, True, False)))
    return tuple(replace(r, front_cost=r.model in front_cost, front_time=r.model in front_time,
                         front_all=r.model in front_all) for r in rows)
