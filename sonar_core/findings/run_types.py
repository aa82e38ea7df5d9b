"""A finished run's scores as a comparison needs them, as read back from its folder: plain values.

:mod:`sonar_core.artifacts.run_reader` fills these from a result folder; :mod:`.comparison` compares
two of them (:func:`.run_data.value_array` gives a column as the float array the statistics take).
Values are per row, in the evaluated dataset's order, None where a row has no value. This module
imports nothing that computes, so that the reader may import it (tests/core/test_findings_types.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .types import FrozenJson, MeanInterval

__all__ = ["MetricInfo", "EvaluatorData", "RunData", "SpanRows"]


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


@dataclass
class EvaluatorData:
    """One finished evaluator of a run: identity, metrics and per-row values."""

    label: str
    evaluator_id: str
    parameters: Mapping[str, FrozenJson]
    #: The evaluator's folder, relative to the run folder.
    folder: str
    metrics: list[MetricInfo]
    test_case_keys: list[str]
    model_keys: list[str]
    #: metric key -> one value per row (None or NaN: no value).
    values: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    #: (metric key, model) -> the interval the run's leaderboard stored; a comparison reuses it when the
    #: run's statistics settings are the comparison's.
    stored_intervals: Mapping[tuple[str, str], MeanInterval] = field(default_factory=dict)
    #: metric key -> the values as a float array (:func:`.run_data.value_array` fills it once).
    _arrays: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


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
    #: run.json's ``statistics`` (confidence level, resamples, seed); empty for an older run.
    statistics: Mapping[str, FrozenJson] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the run ended and every evaluator it scheduled has a finished folder (or was skipped)."""
        return self.status in ("success", "failed") and not self.not_finished


@dataclass(frozen=True)
class SpanRows:
    """One finished evaluator's rows as its results file holds them, for the verdicts written back as spans.

    ``metrics``: its metrics as ``metrics_meta`` states them; ``primary``: the one a verdict is on;
    ``columns``: column name -> one value per row (the metric columns, ``judge_trust`` and the rows' ids).
    """

    metrics: tuple[MetricInfo, ...]
    primary: MetricInfo
    columns: Mapping[str, Sequence[FrozenJson]]

