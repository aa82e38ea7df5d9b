"""Epochs: a test case asked of a model several times, reduced to one value per test case and model.

A run with ``epochs: N`` has N rows per test case and model (``Row.epoch`` 0..N-1), each scored
by every evaluator. Before leaderboards, problems and insights, :func:`reduce_epochs` combines a
test case's epochs per model and metric with the run's ``epoch_reducer``:

- ``mean``: the mean of the epochs' values (a 0/1 verdict becomes the share of epochs passing);
- ``majority``: passes when more than half of the scored epochs pass (a tie fails);
- ``pass_at_k``: passes when at least one of the k epochs passes;
- ``pass_hat_k`` (pass^k): passes only when all k epochs pass;
- ``pass_at_K`` / ``pass_hat_K`` (K below the epochs): Inspect's unbiased pass@K / pass^K estimators.

:mod:`.epoch_reducers` computes each value (a missing epoch: left out by ``mean`` and ``majority``;
no pass value at all when fewer epochs were scored than the reducer needs). A test case and model
left without a value is neither passed nor failed: the evaluator's ``epoch_unscored`` table and a
note say which and why. The reduced rows are one per test case and model, so every interval and
paired test downstream counts test cases, not epochs (the epochs of one case are not independent).

Per test case and model, on the primary metric's verdict, ``consistency`` is the share of epochs
that agree with the majority verdict; a test case whose verdict flips between epochs is *flaky*,
and each model with flaky test cases gets a ``flaky`` insight naming them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from ..contract import Metric, RowResult, Table
from ..dataset import Row
from ..epoch_names import REDUCER_NAMES, EpochReducer, parse_epoch_reducer
from .epoch_reducers import present_values, reduce_values, unscored_reason
from .problems import source_of
from .types import Board, EpochSummary, Insight
from .scored import ScoredEvaluator, SkippedRow, mean

__all__ = ["REDUCERS", "EpochFindings", "ReducedEvaluator", "reduce_values", "reduce_epochs", "consistency"]

#: The reducers a run may choose (``epoch_reducer``), besides ``pass_at_K`` / ``pass_hat_K``.
REDUCERS = REDUCER_NAMES
#: Flaky test cases a ``flaky`` insight names in its sentence (its attributes list every one).
NAMED = 10


@dataclass
class ReducedEvaluator(ScoredEvaluator):
    """One row per test case and model (the reduced values); the models' time and cost stay those of
    every epoch's row (what the answers took and cost)."""

    full_stats: dict[str, dict[str, Any]] = field(default_factory=dict)

    def model_stats(self) -> dict[str, dict[str, Any]]:
        return self.full_stats


def consistency(passes: int, epochs: int) -> float | None:
    """The share of ``epochs`` agreeing with the majority verdict (a tie's majority verdict is fail)."""
    return max(passes, epochs - passes) / epochs if epochs else None


@dataclass
class EpochFindings:
    """What the epochs of one evaluator's rows give the findings."""

    reduced: ReducedEvaluator
    #: The evaluator as the artifacts show it: every epoch's row, plus the consistency table and a note.
    shown: ScoredEvaluator
    epochs: int
    reducer: str
    #: (test case key, model) -> (epochs with a verdict, epochs passing) on the primary metric.
    verdicts: dict[tuple[str, str], tuple[int, int]]
    #: ``[test case key, model, metric, epochs scored, epochs, reason]`` of each value the reducer could
    #: not give (the test case is neither passed nor failed on that metric).
    unscored: list[list[Any]] = field(default_factory=list)

    def flaky(self) -> dict[str, list[tuple[str, int, int]]]:
        """model -> its flaky test cases ``(test case key, passes, epochs)``, in dataset order."""
        out: dict[str, list[tuple[str, int, int]]] = {}
        for (case, model), (k, passes) in self.verdicts.items():
            if 0 < passes < k:
                out.setdefault(model, []).append((case, passes, k))
        return dict(sorted(out.items()))

    def model_consistency(self) -> dict[str, float | None]:
        """model -> the mean consistency of its test cases."""
        per_model: dict[str, list[float]] = {}
        for (_, model), (k, passes) in self.verdicts.items():
            if k:
                per_model.setdefault(model, []).append(consistency(passes, k))
        return {model: mean(values) for model, values in per_model.items()}

    def annotate(self, board: Board) -> Board:
        """``board`` with each row's ``consistency`` and the board's :class:`~.types.EpochSummary`."""
        by_model = self.model_consistency()
        flaky = self.flaky()
        verdict_metric = self.reduced.primary.key if self.verdicts else None
        unscored: dict[str, int] = {}
        for case, model, metric, *_ in self.unscored:
            if metric == self.reduced.primary.key:
                unscored[model] = unscored.get(model, 0) + 1
        summary = EpochSummary(epochs=self.epochs, reducer=self.reducer, verdict_metric=verdict_metric,
                               flaky_test_cases={model: len(cases) for model, cases in flaky.items()},
                               unscored_test_cases=dict(sorted(unscored.items())))
        return dataclasses.replace(board, epochs=summary, rows=tuple(
            dataclasses.replace(row, consistency=by_model.get(row.model)) for row in board.rows))

    def insights(self) -> list[Insight]:
        """A ``flaky`` insight per model whose verdict flips across epochs on some test case."""
        metric = self.reduced.primary
        out = []
        for model, cases in self.flaky().items():
            named = ", ".join(f"{case} ({passes} of {k} pass)" for case, passes, k in cases[:NAMED])
            more = f" and {len(cases) - NAMED} more" if len(cases) > NAMED else ""
            out.append(_insight(
                self.reduced, "flaky",
                f"{model}: {len(cases)} flaky test case(s), whose {metric.display_name} verdict flips across "
                f"{self.epochs} epochs: {named}{more}.",
                "Read the epochs' answers of these test cases: a model that passes only sometimes is not reliable "
                "there (pass_hat_k counts them as failures).",
                {"model_name": model, "metric_id": metric.key, "epochs": self.epochs,
                 "flaky_test_cases": [{"test_case_key": case, "passes": passes, "epochs": k,
                                       "consistency": consistency(passes, k)} for case, passes, k in cases]}))
        return out


def _insight(ev: ScoredEvaluator, insight_type: str, description: str, actions: str,
             attrs: dict[str, Any]) -> Insight:
    return Insight(source=source_of(ev), description=description, insight_type=insight_type, actions=actions,
                   attrs=attrs)


def _verdict_metric(ev: ScoredEvaluator) -> Metric | None:
    """The primary metric, when its values are verdicts (a finite threshold, one value per row)."""
    primary = ev.primary
    threshold = ev.thresholds.get(primary.key, primary.threshold)
    return None if primary.model_level or not math.isfinite(threshold) else primary


def reduce_epochs(ev: ScoredEvaluator, reducer: str = "mean", asked: int = 1) -> EpochFindings | None:
    """The reduced evaluator of ``ev`` (see the module docstring); None when there is one epoch.

    ``asked``: the epochs the run asked for. The rows may hold fewer (a host that failed every item of
    the last epoch leaves no row of it): a test case still has ``asked`` epochs, the missing ones unscored.
    """
    parsed = parse_epoch_reducer(reducer)
    epochs = max([asked, 1] + [row.epoch + 1 for row, _ in ev.scored] + [s.row.epoch + 1 for s in ev.skipped])
    if epochs == 1:
        return None
    groups: dict[tuple[str, str], list[tuple[Row, RowResult]]] = {}
    for pair in ev.scored:
        groups.setdefault((pair[0].test_case_key, pair[0].model_key), []).append(pair)
    skipped_epochs: dict[tuple[str, str], dict[int, str]] = {}
    for s in ev.skipped:
        skipped_epochs.setdefault((s.row.test_case_key, s.row.model_key), {})[s.row.epoch] = s.missing.value
    verdict_metric = _verdict_metric(ev)
    reduced, verdicts, unscored = [], {}, []
    for ident, pairs in groups.items():
        pairs = sorted(pairs, key=lambda pair: pair[0].epoch)
        row, first = pairs[0]
        values, why = {}, None
        for m in ev.cls.metrics:
            column = [r.values.get(m.key) for _, r in pairs]
            values[m.key] = reduce_values(m, column, parsed, epochs, ev.thresholds.get(m.key))
            scored = len(present_values(column))
            # Withheld by the reducer although some epoch has a value (none at all: a row without a
            # value, as in a run of one epoch).
            if values[m.key] is None and scored:
                reason = unscored_reason(parsed, scored, epochs, _missing(m, pairs, skipped_epochs.get(ident, {}),
                                                                          epochs))
                unscored.append([*ident, m.key, scored, epochs, reason])
                if m.key == ev.primary.key:
                    why = reason
        reduced.append((row, RowResult(values=values, details=first.details, error_message=why or first.error_message,
                                       actual_output_meta=first.actual_output_meta)))
        if verdict_metric is not None:
            present = present_values([r.values.get(verdict_metric.key) for _, r in pairs])
            verdicts[ident] = (len(present), sum(1 for v in present if not ev.metric_fails(verdict_metric, v)))
    skipped, seen = [], set()
    for s in ev.skipped:
        if (s.row.test_case_key, s.row.model_key, s.missing) not in seen:
            seen.add((s.row.test_case_key, s.row.model_key, s.missing))
            skipped.append(SkippedRow(s.row, s.missing))
    shared = {f.name: getattr(ev, f.name) for f in dataclasses.fields(ScoredEvaluator) if f.name != "_derived"}
    view = ReducedEvaluator(**{**shared, "scored": reduced, "skipped": skipped}, full_stats=ev.model_stats())
    result = EpochFindings(reduced=view, shown=ev, epochs=epochs, reducer=reducer, verdicts=verdicts,
                           unscored=unscored)
    result.shown = dataclasses.replace(ev, notes=ev.notes + _notes(result, parsed), tables=ev.tables + _tables(result),
                                       _derived={})
    return result


def _missing(metric: Metric, pairs: list[tuple[Row, RowResult]], skipped: dict[int, str], epochs: int) -> list[str]:
    """What happened to each epoch without a value of ``metric``, epoch by epoch."""
    by_epoch = {row.epoch: result for row, result in pairs}
    out = []
    for epoch in range(epochs):
        result = by_epoch.get(epoch)
        if result is not None:
            if not present_values([result.values.get(metric.key)]):
                out.append(f"epoch {epoch}: not scored" + (f", {result.error_message}" if result.error_message else ""))
        elif epoch in skipped:
            out.append(f"epoch {epoch}: skipped, empty '{skipped[epoch]}'")
        else:
            out.append(f"epoch {epoch}: no row (not answered)")
    return out


def _notes(found: EpochFindings, parsed: EpochReducer) -> list[str]:
    k = parsed.k_for(found.epochs)
    if parsed.kind == "mean":
        how = "the mean of its epochs' values"
    elif parsed.kind == "majority":
        how = "the majority verdict of its scored epochs (a tie fails)"
    elif k >= found.epochs:
        how = (f"{parsed.label()} (passes when at least one epoch passes)" if parsed.kind == "pass_at"
               else f"{parsed.label()} (passes only when every epoch passes)")
    else:
        how = (f"{parsed.label()} (the chance that {k} of its epochs, drawn without replacement, "
               + ("hold at least one pass)" if parsed.kind == "pass_at" else "all pass)"))
    notes = [f"{found.epochs} epochs per test case: each test case and model counts once, as {how}; "
             f"intervals and tests are over test cases."]
    primary = found.reduced.primary.key
    missing = [(case, model, reason) for case, model, metric, _, _, reason in found.unscored if metric == primary]
    if missing:
        case, model, reason = missing[0]
        notes.append(f"{len(missing)} test case(s) have no {found.reduced.primary.display_name} value under "
                     f"{parsed.label()}, neither passed nor failed (work/epoch_unscored lists each): {case} on "
                     f"{model}: {reason}.")
    return notes


def _tables(found: EpochFindings) -> list[Table]:
    tables = []
    if found.unscored:
        tables.append(Table(name="epoch_unscored", title=f"Test cases without a reduced value ({found.reducer})",
                            columns=["test_case_key", "model", "metric", "epochs_scored", "epochs", "reason"],
                            rows=[list(r) for r in found.unscored]))
    if not found.verdicts:
        return tables
    metric = found.reduced.primary
    rows = [[case, model, k, passes, consistency(passes, k), "yes" if 0 < passes < k else "no"]
            for (case, model), (k, passes) in found.verdicts.items()]
    # Least consistent first: the flaky test cases lead the table.
    rows.sort(key=lambda r: (r[4] if r[4] is not None else 2.0, r[1], r[0]))
    return [Table(name="epoch_consistency", title=f"Consistency across {found.epochs} epochs ({metric.display_name})",
                  columns=["test_case_key", "model", "epochs", "passes", "consistency", "flaky"], rows=rows)] + tables
