"""Run A against run B as types: what :func:`~.comparison.compare_runs` concludes, in plain values.

Frozen dataclasses, plain text and numbers only; :mod:`sonar_core.artifacts.comparison_dir` lays
them out as comparison.json (its fields in the order written here), comparison.md and
comparison.html, and concludes nothing. This module imports nothing that computes, so that the
writers may import it (tests/core/test_findings_types.py).

- :class:`Comparison`: the whole comparison, its matched :class:`EvaluatorComparison` s, what is
  in one run only (:class:`OneRunOnly`), the regressions (``problems``: :class:`~.types.Problem` s
  of type ``regression``) and, with ``--allow-partial``, what was left out (:class:`PartialRun`);
- :class:`MetricComparison`: one metric of one model, each run's :class:`SideMean`, the delta,
  the :class:`PairedComparison` over the shared test cases and the rows that flipped (:class:`Flips`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..jsontypes import JsonValue
from .types import Problem

__all__ = ["Comparison", "EvaluatorComparison", "Flips", "MetricComparison", "OneRunOnly", "PairedComparison",
           "PartialRun", "RunRef", "SideMean"]


@dataclass(frozen=True)
class SideMean:
    """One run's mean of a metric for a model (None: no value), its interval (``ci_low``/``ci_high``),
    the values it rests on (``n``, 0 without any) and how the interval was drawn ("wilson", "bootstrap")."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str | None


#: A side without a value: no row of that model scored the metric in that run.
NO_VALUES = SideMean(None, None, None, 0, None)


@dataclass(frozen=True)
class PairedComparison:
    """The paired test of B against A over the ``n`` test cases both scored.

    ``delta``: mean(B) - mean(A) over the pairs; ``p_value`` raw; ``p_adjusted`` Holm-adjusted over
    the ``family_size`` tests of the evaluator that could reject (``correction`` "holm"), or the raw
    p-value of a test whose pairs all agree (``correction`` None, outside the family). ``b``/``c``:
    McNemar's discordant counts (None for a permutation test); ``pairs_differing``: pairs whose values differ.
    """

    test: str
    n: int
    delta: float
    p_value: float
    p_adjusted: float
    b: int | None
    c: int | None
    pairs_differing: int
    correction: str | None
    family_size: int


@dataclass(frozen=True)
class Flips:
    """The shared test cases whose row passed in A and fails in B (``pass_to_fail``), and the reverse,
    each at its run's threshold in force."""

    pass_to_fail: tuple[str, ...] = ()
    fail_to_pass: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one model in both runs.

    ``threshold_a``/``threshold_b``: each run's threshold in force; ``delta``: B's mean minus A's (None
    when a side has no value); ``test``: None for a model-level metric or without shared scored rows;
    ``significant``: its adjusted p-value is below 1 - confidence; ``regression``: significant and worse.
    """

    metric: str
    metric_name: str
    model: str
    higher_is_better: bool
    primary: bool
    threshold_a: float | None
    threshold_b: float | None
    a: SideMean
    b: SideMean
    delta: float | None
    test: PairedComparison | None
    flips: Flips
    significant: bool
    regression: bool


@dataclass(frozen=True)
class EvaluatorComparison:
    """One evaluator matched in both runs (same id and parameters): its labels and folders in each,
    the rows both scored (``shared_rows``) and those of one run only, and its metrics compared."""

    label_a: str
    label_b: str
    evaluator_id: str
    parameters: Mapping[str, JsonValue]
    folder_a: str
    folder_b: str
    shared_rows: int
    rows_only_a: int
    rows_only_b: int
    test_cases_only_a: tuple[str, ...]
    test_cases_only_b: tuple[str, ...]
    metrics: tuple[MetricComparison, ...]


@dataclass(frozen=True)
class OneRunOnly:
    """An evaluator of one run that pairs with none of the other's, and why (``reason``); ``evaluator_id``
    and ``parameters`` are None for one that did not finish."""

    label: str
    evaluator_id: str | None
    parameters: Mapping[str, JsonValue] | None
    reason: str


@dataclass(frozen=True)
class RunRef:
    """A compared run: its id and its folder."""

    run_id: str
    path: str


@dataclass(frozen=True)
class PartialRun:
    """A run compared with ``--allow-partial`` that did not finish: its status and, per evaluator
    label, why it did not finish."""

    status: str
    not_finished: Mapping[str, str]


@dataclass(frozen=True)
class Comparison:
    """Run A (before) against run B (after) (:func:`~.comparison.compare_runs`).

    ``problems``: one ``regression`` :class:`~.types.Problem` per significant change for the worse
    (its ``source`` names the evaluator of run B; its explainer fields are empty: no explainer raised it); ``partial``: side ("a"/"b") -> the run that did
    not finish; ``not_comparable``: why nothing, or less, pairs up (both empty for a whole comparison).
    """

    sonar_version: str
    confidence_level: float
    bootstrap_resamples: int
    run_a: RunRef
    run_b: RunRef
    models: tuple[str, ...]
    models_only_a: tuple[str, ...]
    models_only_b: tuple[str, ...]
    test_cases_shared: int
    test_cases_only_a: tuple[str, ...]
    test_cases_only_b: tuple[str, ...]
    evaluators_only_a: tuple[OneRunOnly, ...]
    evaluators_only_b: tuple[OneRunOnly, ...]
    evaluators: tuple[EvaluatorComparison, ...]
    problems: tuple[Problem, ...]
    partial: Mapping[str, PartialRun]
    not_comparable: tuple[str, ...]

    @property
    def regressions(self) -> int:
        """How many significant regressions (comparison.json's ``regressions``)."""
        return len(self.problems)
