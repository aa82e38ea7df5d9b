"""The standard insights every evaluator gets from the core.

- best and worst model by the primary metric (``accuracy``),
- best and worst context retrieval, for evaluators with a retrieval-failure metric,
- the most difficult test case: failed by the most models on the primary metric (ties go to
  the lower mean primary score, then the key) (``weak-point``),
- fastest / slowest model by mean duration (``performance``) and cheapest / most expensive
  by total cost (``cost``), where the dataset has durations and costs.
"""

from __future__ import annotations

from .scored import ScoredEvaluator, mean
from ..contract import MetricRole
from .problems import source_of
from .types import Insight

__all__ = ["standard_insights", "evaluator_insights"]


def _insight(ev: ScoredEvaluator, insight_type: str, description: str, actions: str, attrs: dict) -> Insight:
    return Insight(source=source_of(ev), description=description, insight_type=insight_type, actions=actions,
                   attrs=attrs)


def _ranked(values: dict[str, float | None], higher_is_better: bool) -> list[tuple[str, float]]:
    """Models with a value, best first (ties broken by model name)."""
    present = [(model, v) for model, v in values.items() if v is not None]
    return sorted(present, key=lambda mv: ((-mv[1] if higher_is_better else mv[1]), mv[0]))


def _best_worst(ev, insight_type, ranked, label, metric_key, unit=""):
    if len(ranked) < 2 or ranked[0][1] == ranked[-1][1]:
        return []
    (best, best_v), (worst, worst_v) = ranked[0], ranked[-1]
    return [
        _insight(
            ev, insight_type,
            f"{best} is the {label[0]} ({best_v:.4f}{unit}).",
            f"Prefer {best} where {ev.cls.display_name} matters.",
            {"model_name": best, "metric_id": metric_key, "value": best_v, "rank": "best"},
        ),
        _insight(
            ev, insight_type,
            f"{worst} is the {label[1]} ({worst_v:.4f}{unit}).",
            f"Investigate {worst}'s failing test cases before using it.",
            {"model_name": worst, "metric_id": metric_key, "value": worst_v, "rank": "worst"},
        ),
    ]


def standard_insights(ev: ScoredEvaluator) -> list[Insight]:
    insights: list[Insight] = []
    if not ev.scored:
        return insights
    primary = ev.primary
    aggregates = ev.aggregates()
    ranked = _ranked({m: v[primary.key] for m, v in aggregates.items()}, primary.higher_is_better)
    insights += _best_worst(ev, "accuracy", ranked, (f"best model by {primary.display_name}",
                                                     f"worst model by {primary.display_name}"), primary.key)

    retrieval = [m for m in ev.cls.metrics if m.role is MetricRole.RETRIEVAL_FAILURE]
    if retrieval:
        key = retrieval[0].key
        ranked_retrieval = _ranked({m: v[key] for m, v in aggregates.items()}, higher_is_better=False)
        insights += _best_worst(ev, "retrieval", ranked_retrieval,
                                ("model with the best context retrieval", "model with the worst context retrieval"), key)

    insights += _most_difficult(ev)

    stats = ev.model_stats()
    times = _ranked({m: s["mean_time"] for m, s in stats.items()}, higher_is_better=False)
    insights += _best_worst(ev, "performance", times, ("fastest model", "slowest model"), "mean_time", " s per answer")
    costs = _ranked({m: s["total_cost"] for m, s in stats.items()}, higher_is_better=False)
    insights += _best_worst(ev, "cost", costs, ("cheapest model", "most expensive model"), "total_cost", " USD in total")
    return insights


def _most_difficult(ev: ScoredEvaluator) -> list[Insight]:
    primary = ev.primary
    failures: dict[str, list[str]] = {}
    for row, _ in ev.failing(primary):
        failures.setdefault(row.test_case_key, []).append(row.model_key)
    if not failures:
        return []
    # Scores and questions only of the test cases that failed somewhere (the candidates).
    scores: dict[str, list[float]] = {}
    questions: dict[str, str] = {}
    key = primary.key
    for row, result in ev.scored:
        case = row.test_case_key
        if case in failures:
            value = result.values.get(key)
            if value is not None:
                scores.setdefault(case, []).append(value)
                questions[case] = row.input

    def difficulty(case: str):
        average = mean(scores[case]) or 0.0
        return (-len(failures[case]), average if primary.higher_is_better else -average, case)

    case = min(failures, key=difficulty)
    models = sorted(failures[case])
    return [
        _insight(
            ev,
            "weak-point",
            f"The most difficult test case is {case}: {len(models)} of {len(scores[case])} models failed "
            f"{primary.display_name} ({', '.join(models)}).",
            "Check the test case's expected answer and the models' answers; add similar cases to the test suite.",
            {
                "test_case_key": case,
                "question": questions[case],
                "failed_models": models,
                "metric_id": primary.key,
                "mean_score": mean(scores[case]),
            },
        )
    ]


def evaluator_insights(ev: ScoredEvaluator) -> list[Insight]:
    """The evaluator's own insights (``extra_insights()``), with the base keys every insight has."""
    insights = []
    for extra in ev.extra_insights:
        if not extra.get("description") or not extra.get("insight_type"):
            # A plugin bug: fail this evaluator (recorded in its folder) rather than write a bad file.
            raise ValueError(f"{ev.cls.id}.extra_insights() returned an insight without a description or an "
                             f"insight_type")
        insights.append(_insight(ev, extra["insight_type"], extra["description"],
                                 extra.get("actions_description", ""), dict(extra.get("insight_attrs", {}))))
    return insights
