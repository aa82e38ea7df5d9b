"""The drill-down's verdicts: which of a row's metric values fail their thresholds.

The drill-down (:mod:`sonar_core.artifacts.drilldown`) draws every shown row's values from the
evaluators' summaries, for finished evaluators of a resumed run too; whether a value passes is
concluded here, by :meth:`~sonar_core.contract.Metric.fails` on the threshold the run stored, and
the pages only colour it.
"""

from __future__ import annotations

import math

from ..contract import Metric
from .types import EvaluatorSummary, MetricRule

__all__ = ["summary_fails"]


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
