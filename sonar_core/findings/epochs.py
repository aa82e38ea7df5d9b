"""Epochs: a test case asked of a model several times, reduced to one value per test case and model.

A run with ``epochs: N`` has N rows per test case and model (``Row.epoch`` 0..N-1), each scored
by every evaluator. Before leaderboards, problems and insights, :func:`reduce_epochs` combines a
test case's epochs per model and metric with the run's ``epoch_reducer``:

- ``mean``: the mean of the epochs' values (a 0/1 verdict becomes the share of epochs passing);
- ``majority``: passes when more than half of the epochs pass (a tie fails);
- ``pass_at_k``: passes when at least one of the k epochs passes;
- ``pass_hat_k`` (pass^k): passes only when all k epochs pass.

The three verdict reducers keep a value of the metric's own scale: the epochs' values ordered
from worst to best, ``pass_hat_k`` takes the worst, ``pass_at_k`` the best and ``majority`` the
lower median (the value at position (k - 1) // 2), whose verdict under the threshold is the
reducer's verdict. A model-level metric (one value for the model's whole set of rows) is
always averaged. The reduced rows are one per test case and model, so every interval and paired
test downstream counts test cases, not epochs (the epochs of one case are not independent).

Per test case and model, on the primary metric's verdict, ``consistency`` is the share of epochs
that agree with the majority verdict; a test case whose verdict flips between epochs is *flaky*,
and each model with flaky test cases gets a ``flaky`` insight naming them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from .. import names
from ..contract import Metric, RowResult, Table
from ..dataset import Row
from .problems import report_item
from .scored import ScoredEvaluator, SkippedRow, mean

__all__ = ["REDUCERS", "EpochFindings", "ReducedEvaluator", "reduce_values", "reduce_epochs", "consistency"]

#: The reducers a run may choose (``epoch_reducer``).
REDUCERS = ("mean", "majority", "pass_at_k", "pass_hat_k")
#: Flaky test cases a ``flaky`` insight names in its sentence (its attributes list every one).
NAMED = 10


@dataclass
class ReducedEvaluator(ScoredEvaluator):
    """One row per test case and model (the reduced values); the models' time and cost stay those of
    every epoch's row (what the answers took and cost)."""

    full_stats: dict[str, dict[str, Any]] = field(default_factory=dict)

    def model_stats(self) -> dict[str, dict[str, Any]]:
        return self.full_stats


def _present(values: list[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def reduce_values(metric: Metric, values: list[float | None], reducer: str) -> float | None:
    """One value from a test case's epochs (missing values left out; None when none is left)."""
    present = _present(values)
    if not present:
        return None
    if reducer == "mean" or metric.model_level:
        return math.fsum(present) / len(present)
    worst_first = sorted(present, key=lambda v: v if metric.higher_is_better else -v)
    if reducer == "pass_hat_k":
        return worst_first[0]
    if reducer == "pass_at_k":
        return worst_first[-1]
    if reducer == "majority":
        return worst_first[(len(worst_first) - 1) // 2]
    raise ValueError(f"unknown epoch reducer {reducer!r} (use one of {', '.join(REDUCERS)})")


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

    def annotate(self, board: dict[str, Any]) -> None:
        """Each leaderboard row gains ``consistency``; the board gains ``epochs``."""
        by_model = self.model_consistency()
        flaky = self.flaky()
        for row in board["rows"]:
            row["consistency"] = by_model.get(row["model"])
        verdict_metric = self.reduced.primary.key if self.verdicts else None
        board["epochs"] = {"epochs": self.epochs, "reducer": self.reducer, "verdict_metric": verdict_metric,
                           "flaky_test_cases": {model: len(cases) for model, cases in flaky.items()}}

    def insights(self) -> list[dict[str, Any]]:
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
             attrs: dict[str, Any]) -> dict[str, Any]:
    return {**report_item(ev, description, actions, names.INSIGHTS_SCHEMA_VERSION), "insight_type": insight_type,
            "insight_attrs": attrs}


def _verdict_metric(ev: ScoredEvaluator) -> Metric | None:
    """The primary metric, when its values are verdicts (a finite threshold, one value per row)."""
    primary = ev.primary
    threshold = ev.thresholds.get(primary.key, primary.threshold)
    return None if primary.model_level or not math.isfinite(threshold) else primary


def reduce_epochs(ev: ScoredEvaluator, reducer: str = "mean") -> EpochFindings | None:
    """The reduced evaluator of ``ev`` (see the module docstring); None when its rows have one epoch."""
    if reducer not in REDUCERS:
        raise ValueError(f"unknown epoch reducer {reducer!r} (use one of {', '.join(REDUCERS)})")
    if not any(row.epoch for row, _ in ev.scored) and not any(s.row.epoch for s in ev.skipped):
        return None
    groups: dict[tuple[str, str], list[tuple[Row, RowResult]]] = {}
    for pair in ev.scored:
        groups.setdefault((pair[0].test_case_key, pair[0].model_key), []).append(pair)
    verdict_metric = _verdict_metric(ev)
    reduced, verdicts = [], {}
    for ident, pairs in groups.items():
        pairs = sorted(pairs, key=lambda pair: pair[0].epoch)
        row, first = pairs[0]
        values = {m.key: reduce_values(m, [r.values.get(m.key) for _, r in pairs], reducer) for m in ev.cls.metrics}
        reduced.append((row, RowResult(values=values, details=first.details, error_message=first.error_message,
                                       actual_output_meta=first.actual_output_meta)))
        if verdict_metric is not None:
            present = _present([r.values.get(verdict_metric.key) for _, r in pairs])
            verdicts[ident] = (len(present), sum(1 for v in present if not ev.metric_fails(verdict_metric, v)))
    skipped, seen = [], set()
    for s in ev.skipped:
        if (s.row.test_case_key, s.row.model_key, s.missing) not in seen:
            seen.add((s.row.test_case_key, s.row.model_key, s.missing))
            skipped.append(SkippedRow(s.row, s.missing))
    epochs = 1 + max([row.epoch for row, _ in ev.scored] + [s.row.epoch for s in ev.skipped])
    shared = {f.name: getattr(ev, f.name) for f in dataclasses.fields(ScoredEvaluator) if f.name != "_derived"}
    view = ReducedEvaluator(**{**shared, "scored": reduced, "skipped": skipped}, full_stats=ev.model_stats())
    result = EpochFindings(reduced=view, shown=ev, epochs=epochs, reducer=reducer, verdicts=verdicts)
    result.shown = dataclasses.replace(ev, notes=ev.notes + [_note(result)], tables=ev.tables + _tables(result),
                                       _derived={})
    return result


def _note(found: EpochFindings) -> str:
    how = {"mean": "the mean of its epochs' values", "majority": "the majority verdict of its epochs",
           "pass_at_k": "pass@k (passes when at least one epoch passes)",
           "pass_hat_k": "pass^k (passes only when every epoch passes)"}[found.reducer]
    return (f"{found.epochs} epochs per test case: each test case and model counts once, as {how}; "
            f"intervals and tests are over test cases.")


def _tables(found: EpochFindings) -> list[Table]:
    if not found.verdicts:
        return []
    metric = found.reduced.primary
    rows = [[case, model, k, passes, consistency(passes, k), "yes" if 0 < passes < k else "no"]
            for (case, model), (k, passes) in found.verdicts.items()]
    # Least consistent first: the flaky test cases lead the table.
    rows.sort(key=lambda r: (r[4] if r[4] is not None else 2.0, r[1], r[0]))
    return [Table(name="epoch_consistency", title=f"Consistency across {found.epochs} epochs ({metric.display_name})",
                  columns=["test_case_key", "model", "epochs", "passes", "consistency", "flaky"], rows=rows)]
