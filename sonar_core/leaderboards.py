"""Leaderboards: heatmap (score evaluators) and bool (pass/fail evaluators).

A leaderboard ranks models by the primary metric (best first; ties by model name). The JSON
index maps ``ALL_METRICS`` and each metric key to a ``leaderboard_<N>.json`` file; each file
holds ``data`` (model -> metric -> mean) and ``metadata`` (metric meta incl. threshold). A
bool leaderboard's rows also carry pass / fail / retrieval-failure / generation-failure /
parse-failure counts and the model's total time and cost.
"""

from __future__ import annotations

import html
from typing import Any

from .aggregate import ScoredEvaluator
from .contract import MetricRole, ResultKind

__all__ = ["build_leaderboard", "leaderboard_markdown", "metric_meta", "md_cell", "LEADERBOARD_SCHEMA_VERSION"]

LEADERBOARD_SCHEMA_VERSION = "1.0"


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
        "schema_version": LEADERBOARD_SCHEMA_VERSION,
        "kind": "bool" if ev.cls.kind is ResultKind.BOOL else "heatmap",
        "primary_metric": ev.primary.key,
        "ranking": ranking,
        "rows": rows,
        "metrics_meta": metric_meta(ev),
    }


def _fmt(value: float | None, spec: str = ".4f") -> str:
    return "" if value is None else format(value, spec)


def md_cell(text: str) -> str:
    """Model names come from datasets: escape HTML (many markdown viewers render it) and
    the characters that would break the table."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def leaderboard_markdown(ev: ScoredEvaluator, board: dict[str, Any]) -> str:
    """Markdown table: Rank, LLM, (Pass, Fail,) metrics, Time, Cost."""
    primary = ev.primary
    boolean = board["kind"] == "bool"
    # Bool boards show the pass and fail counts; of the other 0/1 shares only those that say
    # something new (retrieval and parse failures), since fail and generation failure mirror pass.
    others = [m for m in ev.cls.metrics if m.key != primary.key
              and (not boolean or m.role in (MetricRole.RETRIEVAL_FAILURE, MetricRole.PARSE_FAILURE))]
    shown = [primary, *others]
    header = ["Rank", "LLM", *(["Pass", "Fail"] if boolean else []), *(m.display_name for m in shown),
              "Time (s)", "Cost (USD)"]
    lines = [f"# {ev.cls.display_name} leaderboard", "",
             "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in board["rows"]:
        counts = [str(row["counts"]["pass"]), str(row["counts"]["fail"])] if boolean else []
        cells = [str(row["rank"]), md_cell(row["model"]), *counts, *(_fmt(row["metrics"][m.key]) for m in shown),
                 _fmt(row["total_time"], ".2f"), _fmt(row["total_cost"], ".4f")]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    direction = "higher" if primary.higher_is_better else "lower"
    lines.append(f"Ranked by {primary.display_name} ({direction} is better, threshold {ev.thresholds[primary.key]:g}).")
    return "\n".join(lines) + "\n"
