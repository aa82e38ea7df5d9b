"""How sure each aggregate is: an interval per model and metric, paired tests between models.

:func:`model_intervals` gives every model's mean of every metric an interval and its sample size
(Wilson for 0/1 metrics, the seeded percentile bootstrap over test cases for scores);
:func:`pairwise_tests` tests each pair of models on the evaluator's primary metric over the test
cases both answered (exact McNemar for 0/1 values, the paired sign-flip permutation test for
scores), Holm-adjusted over the pairs of one evaluator. The arithmetic is :mod:`.statistics`;
this module only picks the values and shapes the results the artifacts write.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from .scored import ScoredEvaluator
from .types import Board, Insight, MeanInterval, PairwiseTest
from .wording import p_text
from .statistics import Interval, bootstrap_mean_intervals, holm_adjust, paired_test, wilson_interval

__all__ = ["STATS_SEED", "StatsSettings", "annotate_board", "interval_entry", "lead_insight", "model_intervals",
           "p_text", "pairwise_tests"]

#: The seed of every bootstrap and permutation draw: a run's intervals and p-values are the same
#: each time it runs, and a model's interval does not depend on which other models ran beside it.
STATS_SEED = 0


@dataclass(frozen=True)
class StatsSettings:
    """The run's settings for intervals and tests (``confidence_level``, ``bootstrap_resamples``)."""

    confidence: float = 0.95
    #: Bootstrap replicates per interval, and random sign patterns per permutation test.
    resamples: int = 2000
    seed: int = STATS_SEED
    #: How a test case's epochs become one value before anything is ranked (:mod:`.epochs`).
    epoch_reducer: str = "mean"
    #: The epochs the run asked for (``epochs``; 1 for a ready dataset, whose rows say how many).
    epochs: int = 1

    @property
    def alpha(self) -> float:
        """The significance level of the paired tests: 1 - confidence (0.05 at 95%)."""
        return 1.0 - self.confidence

    def as_dict(self) -> dict[str, Any]:
        """What run.json records (``statistics``)."""
        return {
            "confidence_level": self.confidence,
            "bootstrap_resamples": self.resamples,
            "seed": self.seed,
            "interval_methods": {"0/1 metrics": "wilson", "scores": "percentile bootstrap over test cases"},
            "pairwise_tests": {"0/1 metrics": "mcnemar-exact", "scores": "paired-permutation"},
            "correction": "holm",
        }


def _binary(array: np.ndarray) -> bool:
    return bool(np.all((array == 0.0) | (array == 1.0)))


def interval_entry(interval: Interval | None, n: int) -> MeanInterval:
    """What is written beside a value: ``ci_low``, ``ci_high``, ``n`` and the ``method``."""
    if interval is None:
        return MeanInterval(None, None, n, None)
    return MeanInterval(interval.low, interval.high, interval.n, interval.method)


def model_intervals(ev: ScoredEvaluator, settings: StatsSettings) -> dict[str, dict[str, MeanInterval]]:
    """model -> metric key -> :func:`interval_entry` of the model's mean of that metric.

    A 0/1 metric gets Wilson's interval; a score the percentile bootstrap (``settings.resamples``
    replicates, seed ``settings.seed``). Columns of equal length share one draw of resampled rows
    (:func:`~.statistics.bootstrap_mean_intervals`), each as if bootstrapped alone. A model-level
    metric (one value for the model's whole set of rows) has no interval: its rows are not
    independent samples of it.
    """
    result: dict[str, dict[str, MeanInterval]] = {}
    to_bootstrap: dict[int, list[tuple[str, str, np.ndarray]]] = {}
    for model, (_, columns) in ev.value_columns().items():
        entries = result[model] = {}
        for metric in ev.cls.metrics:
            column = columns[metric.key]
            values = column[~np.isnan(column)]  # None and NaN left out, as the leaderboard's mean
            n = int(values.size)
            if metric.model_level or n == 0:
                entries[metric.key] = interval_entry(None, n)
            elif _binary(values):
                entries[metric.key] = interval_entry(
                    wilson_interval(int(values.sum()), n, settings.confidence), n)
            elif bool(np.all(values == values[0])):
                # Every resample has the same mean: a zero-width interval, without drawing.
                entries[metric.key] = interval_entry(
                    Interval(float(values[0]), float(values[0]), n, "bootstrap", settings.confidence), n)
            else:
                entries[metric.key] = interval_entry(None, n)  # replaced below, in metric order
                to_bootstrap.setdefault(n, []).append((model, metric.key, values))
    for n, columns in to_bootstrap.items():
        intervals = bootstrap_mean_intervals([values for _, _, values in columns], settings.confidence,
                                             settings.resamples, settings.seed)
        for (model, key, _), interval in zip(columns, intervals):
            result[model][key] = interval_entry(interval, n)
    return result


def _case_values(ev: ScoredEvaluator, model: str, key: str) -> tuple[dict[str, int], np.ndarray]:
    """The model's values of ``key`` and, per test case key, the position of its (first) value
    (test cases whose value is missing left out)."""
    cases, columns = ev.value_columns()[model]
    column = columns[key]
    positions: dict[str, int] = {}
    for position in np.flatnonzero(~np.isnan(column)).tolist():
        positions.setdefault(cases[position], position)
    return positions, column


def pairwise_tests(ev: ScoredEvaluator, ranking: Sequence[str], settings: StatsSettings) -> tuple[PairwiseTest, ...]:
    """A paired test of each pair of ranked models on the primary metric, Holm-adjusted.

    Pairs run in ranking order (model_a ranked above model_b); ``delta`` is model_a's mean minus
    model_b's over the test cases both answered (``n``), so it is positive where model_a scores
    higher. ``significant``: the Holm-adjusted p-value is below 1 - confidence. A model-level
    primary metric has one value per model, nothing to pair: no tests.
    """
    primary = ev.primary
    if primary.model_level or len(ranking) < 2:
        return ()
    by_case = {model: _case_values(ev, model, primary.key) for model in ranking}
    tests = []
    for i, model_a in enumerate(ranking):
        for model_b in ranking[i + 1:]:
            (a_at, a_column), (b_at, b_column) = by_case[model_a], by_case[model_b]
            shared = [case for case in a_at if case in b_at]
            tests.append((model_a, model_b, paired_test(a_column[[a_at[c] for c in shared]],
                                                        b_column[[b_at[c] for c in shared]],
                                                        resamples=settings.resamples, seed=settings.seed)))
    adjusted = holm_adjust([test.p_value for _, _, test in tests])
    # No pair at all (no shared test case) is no evidence either way.
    return tuple(PairwiseTest(model_a=a, model_b=b, metric=primary.key, test=test.test, n=test.n, delta=test.delta,
                              p_value=test.p_value, p_adjusted=p, significant=bool(test.n > 0 and p < settings.alpha),
                              discordant=(test.b, test.c) if test.b is not None else None)
                 for (a, b, test), p in zip(tests, adjusted))


def annotate_board(board: Board, ev: ScoredEvaluator, settings: StatsSettings) -> Board:
    """``board`` with the intervals, the pairwise tests and the ties with the best model.

    Each row gains ``intervals`` (metric key -> :func:`interval_entry`) and ``tied_with_best``
    (true for a model the paired test cannot tell from the leader: its Holm-adjusted p-value is
    not below 1 - confidence; false for the leader itself); the board gains ``confidence_level``
    and ``pairwise``.
    """
    intervals = model_intervals(ev, settings)
    pairwise = pairwise_tests(ev, board.ranking, settings)
    leader = board.ranking[0] if board.ranking else None
    against_leader = {test.model_b: test for test in pairwise if test.model_a == leader}

    def tied(model: str) -> bool:
        test = against_leader.get(model)
        # A model sharing no test case with the leader was not compared: not a tie.
        return test is not None and test.n > 0 and not test.significant

    rows = tuple(replace(row, intervals=intervals[row.model], tied_with_best=tied(row.model)) for row in board.rows)
    return replace(board, rows=rows, confidence_level=settings.confidence, pairwise=pairwise)


def lead_insight(insights: list[Insight], board: Board) -> None:
    """Say in the best-model insight whether the best is significantly ahead of the second.

    The p-value is the Holm-adjusted one of the pair (the one ``significant`` is decided on).
    """
    ranking = board.ranking
    if len(ranking) < 2 or not board.pairwise:
        return
    first = board.pairwise[0]  # ranking[0] against ranking[1]: the first pair in ranking order
    if (first.model_a, first.model_b) != (ranking[0], ranking[1]) or first.n == 0:
        return
    for n, insight in enumerate(insights):
        attrs = insight.attrs
        if insight.insight_type != "accuracy" or attrs.get("rank") != "best" or attrs.get("model_name") != ranking[0]:
            continue
        how = "leads significantly" if first.significant else "leads, but not significantly"
        sentence = (f"{ranking[0]} {how}: {p_text(first.p_adjusted)} against {ranking[1]} "
                    f"over {first.n} test cases.")
        insights[n] = replace(insight, description=f"{insight.description} {sentence}", attrs={
            **attrs, "significant_lead": first.significant, "second_model": ranking[1],
            "p_value": first.p_adjusted, "test": first.test, "n": first.n})
