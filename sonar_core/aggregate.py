"""Per-model aggregation of per-row metric values, and the scored result of one evaluator.

Aggregation is the mean of a model's non-missing row values for each metric: for 0/1
pass/fail metrics that is the share of rows, for scores the average score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .contract import Evaluator, Input, Metric, RowResult, Table
from .dataset import Row

__all__ = ["ScoredEvaluator", "SkippedRow", "mean", "model_stats"]


def mean(values: list[float]) -> float | None:
    """Arithmetic mean, None for no values."""
    return math.fsum(values) / len(values) if values else None


@dataclass
class SkippedRow:
    """A row the evaluator could not score because a required value was empty."""

    row: Row
    missing: Input


@dataclass
class ScoredEvaluator:
    """Everything the core knows about one evaluator after scoring.

    Attributes:
        cls: the evaluator class.
        params: validated parameters.
        thresholds: metric key -> threshold in force (defaults, then overrides).
        scored: (row, result) pairs in dataset order.
        skipped: rows skipped for a missing required value.
        tables: tables the evaluator derived from all its rows.
        notes: how the evaluator ran, for the report (its judge, a subset of rows...).
    """

    cls: type[Evaluator]
    params: dict[str, Any]
    thresholds: dict[str, float]
    #: The job's name in the run (the evaluator id unless the config named it).
    label: str = ""
    scored: list[tuple[Row, RowResult]] = field(default_factory=list)
    skipped: list[SkippedRow] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    extra_problems: list[dict[str, Any]] = field(default_factory=list)
    #: Lines the report shows about how the evaluator ran (its judge, a subset of rows...).
    notes: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted({row.model_key for row, _ in self.scored})

    @property
    def primary(self) -> Metric:
        return self.cls.primary_metric()

    def metric_fails(self, metric: Metric, value: float | None) -> bool:
        return metric.fails(value, self.thresholds.get(metric.key))

    def aggregates(self) -> dict[str, dict[str, float | None]]:
        """model -> metric key -> mean of the model's row values."""
        by_model: dict[str, dict[str, list[float]]] = {}
        for row, result in self.scored:
            per_metric = by_model.setdefault(row.model_key, {m.key: [] for m in self.cls.metrics})
            for metric in self.cls.metrics:
                value = result.values.get(metric.key)
                if value is not None and not (isinstance(value, float) and math.isnan(value)):
                    per_metric[metric.key].append(float(value))
        return {
            model: {key: mean(values) for key, values in metrics.items()}
            for model, metrics in sorted(by_model.items())
        }


def model_stats(rows: list[Row]) -> dict[str, dict[str, float | int | None]]:
    """model -> row count, total/mean duration (s) and total cost (USD) where known."""
    stats: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = stats.setdefault(row.model_key, {"rows": 0, "durations": [], "costs": []})
        entry["rows"] += 1
        if row.actual_duration is not None:
            entry["durations"].append(row.actual_duration)
        if row.cost is not None:
            entry["costs"].append(row.cost)
    result: dict[str, dict[str, float | int | None]] = {}
    for model, entry in sorted(stats.items()):
        durations, costs = entry["durations"], entry["costs"]
        result[model] = {
            "rows": entry["rows"],
            "total_time": math.fsum(durations) if durations else None,
            "mean_time": mean(durations),
            "total_cost": math.fsum(costs) if costs else None,
            "mean_cost": mean(costs),
        }
    return result
