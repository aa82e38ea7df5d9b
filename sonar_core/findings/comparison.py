"""Run A against run B: matched evaluators, models and test cases, deltas, paired tests, flips.

``sonar compare A B`` asks whether B (the newer run) is better or worse than A beyond noise.
Evaluators match on id AND validated parameters (two instances with the same both pair up in
run order), models on their key, rows on (test case, model). For every matched evaluator,
metric and model:

- each run's mean with its interval (:func:`~.statistics.mean_interval`: Wilson for 0/1 values,
  the seeded percentile bootstrap otherwise) and the delta B - A;
- the paired test over the test cases both runs scored (:func:`~.statistics.paired_test`: exact
  McNemar for 0/1 values, paired permutation otherwise), its p-value Holm-adjusted over every
  test of that evaluator that could reject at all (:func:`~.statistics.holm_adjust`; a test whose
  pairs all agree has p = 1 and stays out of the family); each test names its ``correction``
  (``holm``, or None outside the family) and the ``family_size`` beside ``p_value`` (raw) and
  ``p_adjusted``;
- the rows that flipped: passing in A and failing in B at each run's threshold in force, or the
  reverse.

A change for the worse whose adjusted p-value is below 1 - confidence is a problem of type
``regression``. Whatever is in one run only (evaluators, models, test cases) is listed.
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import numpy as np

from .comparability import IncompatibleRuns, check_comparable
from .comparison_rows import PairingMemo, model_codes
from .comparison_types import (NO_VALUES, Comparison, EvaluatorComparison, Flips, MetricComparison, OneRunOnly,
                               PairedComparison, RunRef, SideMean)
from .confidence import STATS_SEED
from .run_data import EvaluatorData, MetricInfo, RunData, failing, value_array
from .statistics import PairedTest, bootstrap_mean_intervals, holm_adjust, paired_test, wilson_interval
from .types import Problem, Source

__all__ = ["compare_runs", "IncompatibleRuns", "DEFAULT_CONFIDENCE"]

DEFAULT_CONFIDENCE = 0.95
_AVID_REGRESSION = ("P0204", "Accuracy: model performance is below the acceptable level")


def _key(ev: EvaluatorData) -> str:
    return ev.evaluator_id + "\x00" + json.dumps(ev.parameters, sort_keys=True, default=str)


def _match(a: RunData, b: RunData) -> tuple[list[tuple[EvaluatorData, EvaluatorData]], list[OneRunOnly],
                                            list[OneRunOnly]]:
    """Pairs of matching evaluators, and those of A only and of B only (each with why)."""
    pool: dict[str, list[EvaluatorData]] = {}
    for ev in b.evaluators:
        pool.setdefault(_key(ev), []).append(ev)
    pairs, only_a = [], []
    for ev in a.evaluators:
        candidates = pool.get(_key(ev))
        if candidates:
            pairs.append((ev, candidates.pop(0)))
        else:
            only_a.append(ev)
    only_b = [ev for evs in pool.values() for ev in evs]
    ids_b = {ev.evaluator_id for ev in only_b}
    ids_a = {ev.evaluator_id for ev in only_a}

    def listed(ev: EvaluatorData, other_ids: set[str], other: RunData) -> OneRunOnly:
        why = ("did not finish in the other run" if ev.label in other.not_finished or ev.label in other.unfinished
               else "parameters differ" if ev.evaluator_id in other_ids else "not run in the other run")
        return OneRunOnly(ev.label, ev.evaluator_id, ev.parameters, why)

    def missing(run: RunData) -> list[OneRunOnly]:
        return [OneRunOnly(label, None, None, f"did not finish ({status})")
                for label, status in {**run.unfinished, **run.not_finished}.items()]

    return (pairs, [listed(ev, ids_b, b) for ev in only_a] + missing(a),
            [listed(ev, ids_a, a) for ev in only_b] + missing(b))


def _reusable(run: RunData, confidence: float, resamples: int) -> bool:
    """Whether the intervals ``run`` stored are the ones this comparison would compute: same level,
    same resamples, same seed (the comparison's draws are seeded as the run's are)."""
    stats = run.statistics
    return (stats.get("confidence_level") == confidence and stats.get("bootstrap_resamples") == resamples
            and stats.get("seed") == STATS_SEED)


def _side_intervals(ev: EvaluatorData, models: list[str], confidence: float, resamples: int,
                    reuse: bool = False, codes: np.ndarray | None = None) -> dict[tuple[str, str], SideMean]:
    """Every (metric, model) mean of one run's evaluator with its interval.

    Wilson for 0/1 values, the seeded percentile bootstrap otherwise: the intervals
    :func:`~.statistics.mean_interval` gives, but the score columns of one length share one set of
    draws (:func:`~.statistics.bootstrap_mean_intervals`), the costly part at 200,000 rows. With
    ``reuse``, an interval the run's leaderboard stored over the same number of values is taken as it
    is: the run drew it with the same seed and settings, so it is the one computed here, without the
    draws. ``codes``: the rows' :func:`~.comparison_rows.model_codes` (computed when not given).
    """
    codes = model_codes(ev.model_keys, models) if codes is None else codes
    masks = {model: codes == k for k, model in enumerate(models)}
    out: dict[tuple[str, str], SideMean] = {}
    pending: dict[int, list[tuple[tuple[str, str], float, np.ndarray]]] = {}
    for metric in ev.metrics:
        values = value_array(ev, metric.key)
        for model in models:
            column = values[masks[model]]
            present = column[~np.isnan(column)]
            if present.size == 0:
                out[(metric.key, model)] = NO_VALUES
                continue
            mean = float(present.mean())
            stored = ev.stored_intervals.get((metric.key, model)) if reuse else None
            if stored is not None and stored.ci_low is not None and stored.n == int(present.size):
                out[(metric.key, model)] = SideMean(mean, stored.ci_low, stored.ci_high, stored.n, stored.method)
            elif bool(np.all((present == 0.0) | (present == 1.0))):
                interval = wilson_interval(int(present.sum()), int(present.size), confidence)
                out[(metric.key, model)] = SideMean(mean, interval.low, interval.high, interval.n, interval.method)
            else:
                pending.setdefault(int(present.size), []).append(((metric.key, model), mean, present))
    for group in pending.values():
        intervals = bootstrap_mean_intervals([present for _, _, present in group], confidence, resamples,
                                             STATS_SEED)
        for (key, mean, _), interval in zip(group, intervals):
            out[key] = SideMean(mean, interval.low, interval.high, interval.n, interval.method)
    return out


def _worse(metric: MetricInfo, delta: float) -> bool:
    return delta < 0 if metric.higher_is_better else delta > 0


class _Pending(NamedTuple):
    """One metric and model compared before Holm's correction: its paired test (None: none) and how many
    of its pairs differ."""

    metric: MetricInfo
    other: MetricInfo
    model: str
    a: SideMean
    b: SideMean
    test: PairedTest | None
    differing: int
    flips: Flips


def _paired(pending: _Pending, adjusted: float, correction: str | None, family_size: int) -> PairedComparison:
    test = pending.test
    assert test is not None
    return PairedComparison(test.test, test.n, test.delta, test.p_value, adjusted, test.b, test.c, pending.differing,
                            correction, family_size)


def _compare_evaluator(ea: EvaluatorData, eb: EvaluatorData, models: list[str], confidence: float,
                       resamples: int, reuse_a: bool = False, reuse_b: bool = False,
                       memo: PairingMemo | None = None) -> EvaluatorComparison:
    memo = memo or PairingMemo(models)
    pairs = memo.pairs(ea, eb)
    metrics_b = {m.key: m for m in eb.metrics}
    pendings: list[_Pending] = []
    sides_a = _side_intervals(ea, models, confidence, resamples, reuse_a, memo.codes(ea.model_keys))
    sides_b = _side_intervals(eb, models, confidence, resamples, reuse_b, memo.codes(eb.model_keys))
    for metric in ea.metrics:
        other = metrics_b.get(metric.key)
        if other is None:
            continue
        va, vb = value_array(ea, metric.key), value_array(eb, metric.key)
        for model in models:
            a_side = sides_a[(metric.key, model)]
            b_side = sides_b.get((metric.key, model), NO_VALUES)
            if a_side.n == 0 and b_side.n == 0:
                continue
            rows_a, rows_b = pairs.by_model[model]
            pa, pb = va[rows_a], vb[rows_b]
            both = ~np.isnan(pa) & ~np.isnan(pb)
            test, differing, flips = None, 0, Flips()
            if not metric.model_level and both.any():
                # B against A: the test's delta is mean(B) - mean(A) over the pairs.
                test = paired_test(pb[both], pa[both], seed=0)
                differing = int(np.count_nonzero(pb[both] != pa[both]))
                fail_a, fail_b = failing(metric, pa), failing(other, pb)
                flips = Flips(pass_to_fail=tuple(pairs.cases_a[rows_a[both & ~fail_a & fail_b]].tolist()),
                              fail_to_pass=tuple(pairs.cases_a[rows_a[both & fail_a & ~fail_b]].tolist()))
            pendings.append(_Pending(metric, other, model, a_side, b_side, test, differing, flips))
    # Holm's family: the tests that could reject at all. A test whose pairs all agree has p = 1
    # whatever happens (its smallest attainable p-value is 1), so, as in Tarone's correction for
    # discrete tests, it is left out rather than counted; its adjusted p-value is its own, 1.
    tested = [p for p in pendings if p.test is not None and p.differing > 0]
    adjusted = dict(zip(map(id, tested), holm_adjust([p.test.p_value for p in tested if p.test is not None])))
    entries = []
    for p in pendings:
        test, significant, regression = None, False, False
        if p.test is not None and id(p) in adjusted:
            # The correction is named beside the figure it changed: which one, over how many tests.
            test = _paired(p, adjusted[id(p)], "holm", len(tested))
            significant = test.p_adjusted < 1.0 - confidence
            regression = significant and _worse(p.metric, test.delta)
        elif p.test is not None:
            test = _paired(p, p.test.p_value, None, len(tested))
        delta = None if p.a.value is None or p.b.value is None else p.b.value - p.a.value
        entries.append(MetricComparison(p.metric.key, p.metric.display_name, p.model, p.metric.higher_is_better,
                                        p.metric.is_primary, p.metric.threshold, p.other.threshold, p.a, p.b, delta,
                                        test, p.flips, significant, regression))
    return EvaluatorComparison(
        label_a=ea.label, label_b=eb.label, evaluator_id=ea.evaluator_id, parameters=ea.parameters,
        folder_a=ea.folder, folder_b=eb.folder, shared_rows=len(pairs.rows_a),
        rows_only_a=pairs.rows_only_a, rows_only_b=pairs.rows_only_b,
        test_cases_only_a=pairs.test_cases_only_a, test_cases_only_b=pairs.test_cases_only_b,
        metrics=tuple(entries))


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def regression_problem(evaluator: EvaluatorComparison, entry: MetricComparison, confidence: float) -> Problem:
    """A ``regression`` problem for a significant change for the worse (problems_and_actions.json's
    shape, without an explainer, is :mod:`sonar_core.artifacts.comparison_dir`'s)."""
    test, model, metric = entry.test, entry.model, entry.metric_name
    assert test is not None
    threshold = entry.threshold_b
    value_b = entry.b.value
    crossed = threshold is not None and value_b is not None and (
        value_b < threshold if entry.higher_is_better else value_b > threshold)
    description = (f"{metric} of {model} went from {_fmt(entry.a.value)} to {_fmt(value_b)} "
                   f"({evaluator.label_b}): {test.test} p = {test.p_value:.4g} over {test.n} shared "
                   f"test cases (Holm-adjusted over the evaluator's {test.family_size} tests: "
                   f"{test.p_adjusted:.4g}, below {1 - confidence:.2g}); "
                   f"{len(entry.flips.pass_to_fail)} row(s) went from pass to fail.")
    return Problem(
        source=Source(explainer_id="", explainer_name="", evaluator_id=evaluator.evaluator_id,
                      evaluator_label=evaluator.label_b),
        description=description,
        severity="HIGH" if crossed else "MEDIUM",
        problem_type="regression",
        actions="Look at the rows that went from pass to fail (their case pages in both runs) and "
                "at what changed between the runs before releasing B.",
        attrs={
            "avid_problem_code": _AVID_REGRESSION[0], "avid_problem_code_description": _AVID_REGRESSION[1],
            "model_name": model, "metric": entry.metric, "value_a": entry.a.value,
            "value_b": value_b, "delta": entry.delta, "test": test.test,
            "p_value": test.p_value, "p_adjusted": test.p_adjusted, "correction": test.correction,
            "family_size": test.family_size, "n": test.n,
            "test_case_keys": list(entry.flips.pass_to_fail),
        },
    )


def compare_runs(a: RunData, b: RunData, confidence: float = DEFAULT_CONFIDENCE,
                 resamples: int = 2000, allow_partial: bool = False) -> Comparison:
    """The comparison of run A (before) and run B (after).

    Raises IncompatibleRuns when the runs come from different Sonar versions or schemas, and (unless
    ``allow_partial``) when a run did not finish or nothing pairs up (:mod:`.comparability`).
    """
    if a.schema_version != b.schema_version:
        raise IncompatibleRuns(f"the runs have different result schemas ({a.schema_version} and {b.schema_version})")
    if a.sonar_version != b.sonar_version:
        raise IncompatibleRuns(f"the runs come from different Sonar versions ({a.sonar_version} and "
                               f"{b.sonar_version}); compare runs of one version")
    if not math.isfinite(confidence) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    pairs, only_a, only_b = _match(a, b)
    partial, reasons = check_comparable(a, b, len(pairs), allow_partial)
    models = [m for m in a.models if m in set(b.models)]
    reuse = (_reusable(a, confidence, resamples), _reusable(b, confidence, resamples))
    memo = PairingMemo(models)  # the evaluators of a run usually share their rows: paired once
    evaluators = tuple(_compare_evaluator(ea, eb, models, confidence, resamples, *reuse, memo=memo)
                       for ea, eb in pairs)
    problems = tuple(regression_problem(ev, entry, confidence) for ev in evaluators for entry in ev.metrics
                     if entry.regression)
    cases_b = set(b.test_cases)
    cases_a = set(a.test_cases)
    return Comparison(
        sonar_version=a.sonar_version,
        confidence_level=confidence,
        bootstrap_resamples=resamples,
        run_a=RunRef(a.run_id, a.path),
        run_b=RunRef(b.run_id, b.path),
        models=tuple(models),
        models_only_a=tuple(m for m in a.models if m not in set(b.models)),
        models_only_b=tuple(m for m in b.models if m not in set(a.models)),
        test_cases_shared=sum(1 for c in a.test_cases if c in cases_b),
        test_cases_only_a=tuple(c for c in a.test_cases if c not in cases_b),
        test_cases_only_b=tuple(c for c in b.test_cases if c not in cases_a),
        evaluators_only_a=tuple(only_a),
        evaluators_only_b=tuple(only_b),
        evaluators=evaluators,
        problems=problems,
        partial=partial,
        not_comparable=tuple(reasons),
    )
