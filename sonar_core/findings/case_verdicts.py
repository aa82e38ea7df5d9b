"""The drill-down's verdicts: which of a row's metric values fail their thresholds.

The drill-down (:mod:`sonar_core.artifacts.drilldown`) draws every shown row's values from the
evaluators' summaries, for finished evaluators of a resumed run too; whether a value passes is
concluded here, by :meth:`~sonar_core.contract.Metric.fails` on the threshold the run stored (the
values of each metric, and the primary metric's value of each turn of a row scored turn by turn),
and the pages only colour it.
"""

from __future__ import annotations

import math

from ..contract import Metric
from .types import CaseFails, EvaluatorSummary, MetricRule

__all__ = ["summary_fails", "case_fails"]


def _metric(rule: MetricRule) -> Metric:
    # A null threshold (an infinite one) fails nothing: the threshold at the better end's infinity.
    threshold = rule.threshold if rule.threshold is not None else (-math.inf if rule.higher_is_better else math.inf)
    return Metric(rule.key, rule.key, "", higher_is_better=rule.higher_is_better, threshold=threshold)


def summary_fails(summary: EvaluatorSummary) -> dict[str, tuple[bool | None, ...]]:
    """Row key -> per metric value (the evaluator's metric order): whether it fails its threshold (None
    for no value), for each drill-down row an evaluator's summary holds; empty without any."""
    if not summary.test_cases:
        return {}
    metrics = [_metric(rule) for rule in summary.metrics]
    return {key: tuple(None if value is None else metric.fails(value) for metric, value in zip(metrics, values))
            for key, values, _ in summary.test_cases["rows"]}


def case_fails(summary: EvaluatorSummary) -> CaseFails:
    """:func:`summary_fails`, and per row scored turn by turn whether each turn's primary value fails."""
    values = summary_fails(summary)
    if not summary.test_cases or not summary.test_cases.get("turns"):
        return CaseFails(values)
    rule = next(r for r in summary.metrics if r.key == summary.leaderboard.primary_metric)
    primary = _metric(rule)
    turns = {key: tuple(None if value is None else primary.fails(value) for _, value in per_turn)
             for key, per_turn in summary.test_cases["turns"].items()}
    return CaseFails(values, turns)
