"""Per-model aggregation of per-row metric values, and the scored result of one evaluator.

Aggregation is the mean of a model's non-missing row values for each metric: for 0/1
pass/fail metrics that is the share of rows, for scores the average score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..contract import Evaluator, Input, Metric, RowResult, Table
from ..dataset import Row

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
        extra_problems, extra_insights: what the evaluator's own hooks returned.
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
    extra_insights: list[dict[str, Any]] = field(default_factory=list)

    # Derived from ``scored`` once it is complete (leaderboards, problems, insights and the
    # journal all ask); keyed by the number of scored rows so that a later append recomputes.
    _derived: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False, compare=False)

    def _cached(self, name: str, compute):
        size = len(self.scored)
        hit = self._derived.get(name)
        if hit is None or hit[0] != size:
            hit = (size, compute())
            self._derived[name] = hit
        return hit[1]

    @property
    def models(self) -> list[str]:
        return list(self.by_model())

    @property
    def primary(self) -> Metric:
        return self.cls.primary_metric()

    def metric_fails(self, metric: Metric, value: float | None) -> bool:
        return metric.fails(value, self.thresholds.get(metric.key))

    def failing(self, metric: Metric) -> list[tuple[Row, RowResult]]:
        """The (row, result) pairs whose value of ``metric`` is on the wrong side of its threshold."""
        def compute():
            key, threshold = metric.key, self.thresholds.get(metric.key)
            if threshold is None:  # as Metric.fails: the metric's own threshold
                threshold = metric.threshold
            # Metric.fails, inlined: this runs once per row and metric (one pass, no tuple per row).
            if metric.higher_is_better:
                return [pair for pair in self.scored
                        if (v := pair[1].values.get(key)) is not None and v == v and v < threshold]
            return [pair for pair in self.scored if (v := pair[1].values.get(key)) is not None and v == v and v > threshold]
        return self._cached(f"failing:{metric.key}", compute)

    def by_model(self) -> dict[str, list[tuple[Row, RowResult]]]:
        """model -> its (row, result) pairs in dataset order; models sorted by name."""
        def compute():
            groups: dict[str, list[tuple[Row, RowResult]]] = {}
            for pair in self.scored:
                groups.setdefault(pair[0].model_key, []).append(pair)
            return dict(sorted(groups.items()))
        return self._cached("by_model", compute)

    def aggregates(self) -> dict[str, dict[str, float | None]]:
        """model -> metric key -> mean of the model's row values (NaN and None left out)."""
        def compute():
            import numpy as np  # here: only the statistics need it

            # From the value columns (the intervals read them too): one pass over the rows, not one per metric.
            # NaN stands for None there; math.fsum of the rest is the mean of the rows' floats, to the bit.
            return {model: {key: mean(column[~np.isnan(column)].tolist()) for key, column in columns.items()}
                    for model, (_, columns) in self.value_columns().items()}
        # A copy: callers (leaderboard rows) hand the dicts on into documents.
        return {model: dict(values) for model, values in self._cached("aggregates", compute).items()}

    def value_columns(self) -> dict[str, tuple[list[str], dict[str, Any]]]:
        """model -> (its test case keys in row order, metric key -> numpy float array of its values,
        NaN where missing): the intervals and paired tests read these (one pass over the rows)."""
        def compute():
            import numpy as np  # here: only the statistics need it

            keys = [m.key for m in self.cls.metrics]
            return {model: ([row.test_case_key for row, _ in pairs],
                            {key: np.array([r.values.get(key) for _, r in pairs], dtype=float) for key in keys})
                    for model, pairs in self.by_model().items()}
        return self._cached("value_columns", compute)

    def model_stats(self) -> dict[str, dict[str, float | int | None]]:
        """:func:`model_stats` of the scored rows, computed once."""
        return self._cached("model_stats", lambda: model_stats([row for row, _ in self.scored]))


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
