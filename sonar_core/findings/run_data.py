"""A finished run's scores as a comparison needs them: plain columns, no artifact knowledge.

:mod:`sonar_core.artifacts.run_reader` fills these from a result folder; :mod:`.comparison`
compares two of them. Values are per row, in the evaluated dataset's order, NaN where a row has
no value (None in the files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["MetricInfo", "EvaluatorData", "RunData"]


@dataclass(frozen=True)
class MetricInfo:
    """One metric as ``metrics_meta`` states it, with the threshold in force in that run."""

    key: str
    display_name: str
    higher_is_better: bool
    #: None: no value is ever on the wrong side (an infinite threshold, written as null).
    threshold: float | None
    is_primary: bool
    #: A property of a model's whole set of rows, repeated on each row: no paired test, no flips.
    model_level: bool = False

    def failing(self, values: np.ndarray, threshold: float | None = None) -> np.ndarray:
        """Which ``values`` are on the wrong side of the threshold (NaN never is), as Metric.fails."""
        t = self.threshold if threshold is None else threshold
        if t is None:
            return np.zeros(values.shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            return values < t if self.higher_is_better else values > t


@dataclass
class EvaluatorData:
    """One finished evaluator of a run: identity, metrics and per-row values."""

    label: str
    evaluator_id: str
    parameters: dict[str, Any]
    #: The evaluator's folder, relative to the run folder.
    folder: str
    metrics: list[MetricInfo]
    test_case_keys: list[str]
    model_keys: list[str]
    #: metric key -> float64 array, one value per row (NaN: no value).
    values: dict[str, np.ndarray] = field(default_factory=dict)
    #: (metric key, model) -> the interval the run's leaderboard stored (``ci_low``, ``ci_high``, ``n``,
    #: ``method``); a comparison reuses it when the run's statistics settings are the comparison's.
    stored_intervals: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


@dataclass
class RunData:
    """What a comparison reads of one result folder."""

    path: str
    run_id: str
    schema_version: str
    sonar_version: str
    models: list[str]
    #: Test case keys in dataset order, as the run's evaluators saw them (unique).
    test_cases: list[str]
    evaluators: list[EvaluatorData]
    #: Evaluators that ran and failed (label -> status); compared as missing.
    unfinished: dict[str, str] = field(default_factory=dict)
    #: run.json's ``status``: ``success`` and ``failed`` are finished runs; ``running`` (killed or still
    #: going) and ``stopped_by_budget`` are not.
    status: str = "success"
    #: Evaluators the run was to score that have no finished folder (label -> why): never started before
    #: the run stopped, or listed as finished without their done marker.
    not_finished: dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the run ended and every evaluator it scheduled has a finished folder (or was skipped)."""
        return self.status in ("success", "failed") and not self.not_finished
    #: run.json's ``statistics`` (confidence level, resamples, seed); empty for an older run.
    statistics: dict[str, Any] = field(default_factory=dict)
