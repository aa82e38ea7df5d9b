"""Leaderboards: heatmap (score evaluators) and bool (pass/fail evaluators).

A leaderboard (:class:`~.types.Board`) ranks models by the primary metric (best first; ties by
model name). Each model's row holds every metric's mean, its rows, total time and cost; a bool
leaderboard's rows also carry pass / fail / retrieval-failure / generation-failure / parse-failure
counts. :mod:`sonar_core.artifacts.board_files` writes it as the leaderboard files.
"""

from __future__ import annotations

from .scored import ScoredEvaluator
from .types import Board, BoardRow
from ..contract import MetricRole, ResultKind

__all__ = ["build_leaderboard"]


def _ranking(ev: ScoredEvaluator, aggregates: dict[str, dict[str, float | None]]) -> list[str]:
    primary = ev.primary

    def key(model: str):
        value = aggregates[model].get(primary.key)
        if value is None:
            return (1, 0.0, model)
        return (0, -value if primary.higher_is_better else value, model)

    return sorted(aggregates, key=key)


def build_leaderboard(ev: ScoredEvaluator) -> Board:
    """The leaderboard of one evaluator: kind, ranking and a row per model (every metric's mean, its
    rows, time and cost, and a pass/fail evaluator's rows per role)."""
    aggregates = ev.aggregates()
    stats = ev.model_stats()
    ranking = _ranking(ev, aggregates)
    counts: dict[str, dict[str, int]] = {}
    if ev.cls.kind is ResultKind.BOOL:
        role_keys = {m.role: m.key for m in ev.cls.metrics if m.role is not None}
        by_model = ev.by_model()
        for model in ranking:
            per_role = {role.value: 0 for role in MetricRole}
            for role, key in role_keys.items():
                per_role[role.value] = sum(1 for _, result in by_model[model] if result.values.get(key))
            counts[model] = per_role
    rows = tuple(BoardRow(model=model, rank=rank, metrics=aggregates[model], rows=int(stats[model]["rows"] or 0),
                          total_time=stats[model]["total_time"], total_cost=stats[model]["total_cost"],
                          counts=counts.get(model))
                 for rank, model in enumerate(ranking, start=1))
    return Board(kind="bool" if ev.cls.kind is ResultKind.BOOL else "heatmap", primary_metric=ev.primary.key,
                 ranking=tuple(ranking), rows=rows)
