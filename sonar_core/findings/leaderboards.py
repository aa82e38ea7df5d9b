"""Leaderboards: heatmap (score evaluators) and bool (pass/fail evaluators).

A leaderboard ranks models by the primary metric (best first; ties by model name). The JSON
index maps ``ALL_METRICS`` and each metric key to a ``leaderboard_<N>.json`` file; each file
holds ``data`` (model -> metric -> mean) and ``metadata`` (metric meta incl. threshold). A
bool leaderboard's rows also carry pass / fail / retrieval-failure / generation-failure /
parse-failure counts and the model's total time and cost.
"""

from __future__ import annotations

from typing import Any

from .. import names
from .scored import ScoredEvaluator
from ..contract import MetricRole, ResultKind

__all__ = ["build_leaderboard", "metric_meta"]


def metric_meta(ev: ScoredEvaluator) -> list[dict[str, Any]]:
    """``metrics_meta`` entries (H2O Sonar's shape) with the thresholds in force."""
    return ev.cls.metrics_meta(ev.thresholds)


def _ranking(ev: ScoredEvaluator, aggregates: dict[str, dict[str, float | None]]) -> list[str]:
    primary = ev.primary

    def key(model: str):
        value = aggregates[model].get(primary.key)
        if value is None:
            return (1, 0.0, model)
        return (0, -value if primary.higher_is_better else value, model)

    return sorted(aggregates, key=key)


def build_leaderboard(ev: ScoredEvaluator) -> dict[str, Any]:
    """The leaderboard of one evaluator: kind, ranking, per-model rows, and metric meta."""
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
    rows = []
    for rank, model in enumerate(ranking, start=1):
        entry: dict[str, Any] = {
            "rank": rank,
            "model": model,
            "metrics": aggregates[model],
            "rows": stats[model]["rows"],
            "total_time": stats[model]["total_time"],
            "total_cost": stats[model]["total_cost"],
        }
        if model in counts:
            entry["counts"] = counts[model]
        rows.append(entry)
    return {
        "schema_version": names.LEADERBOARD_SCHEMA_VERSION,
        "kind": "bool" if ev.cls.kind is ResultKind.BOOL else "heatmap",
        "primary_metric": ev.primary.key,
        "ranking": ranking,
        "rows": rows,
        "metrics_meta": metric_meta(ev),
    }
