"""``sonar run --dry-run``: what a run would ask and cost, without asking anything.

The dry run *is* the run: the same configuration goes through :func:`~.runner.execute_run` (the
same pipeline, epochs, calibration and evaluators), in a temporary folder that is deleted after,
with ``dry=True``: every client's calls go to the run's :class:`~sonar_core.llm.ledger.CostLedger`
in its dry mode, which counts each call the response cache cannot answer, estimates its tokens
and cost, and answers it with a placeholder (a labelled request: its first label). The response
cache is read as usual and written never (nor the row results, nor the calibration cache), so
the count is of the calls still needed. No host, no judge is called.

What it cannot know: a step that depends on an earlier answer (a RAGAS metric's statements, a
simulated user's next turn) sees a placeholder, so those evaluators' counts are estimates
(:func:`estimated_evaluators`); output tokens are estimated (docs/costs.md).
"""

from __future__ import annotations

import tempfile
from typing import Any

from ..config import RunConfig
from ..llm.ledger import CostEstimate
from ..plugins import PluginManager
from .calibration import JudgeGates
from .runner import execute_run


class DryRunEstimate(CostEstimate, JudgeGates):
    """``sonar run --dry-run --json``: the ledger's estimate, the judge gates, and what the figures leave out."""
    estimated: list[str]  #: evaluators whose counts are estimates (they ask in dependent steps)
    skipped: list[dict[str, str]]  #: evaluators that would be skipped: ``evaluator`` and ``reason``

__all__ = ["dry_run", "estimated_evaluators", "format_estimate"]


def estimated_evaluators(config: RunConfig, plugins: PluginManager | None = None) -> list[str]:
    """Labels of the run's judge evaluators whose later calls depend on earlier answers (anything but a
    one-question judge): their call counts are estimates."""
    from ..judge_evaluator import JudgeEvaluator
    from ..plugins import get_plugin_manager

    plugins = plugins or get_plugin_manager(config.plugins)
    plugins.load()
    labels = []
    for spec in config.specs():
        cls = plugins.evaluators.get(spec.id)
        if cls is not None and cls.requires_judge and not issubclass(cls, JudgeEvaluator):
            labels.append(spec.label)
    return labels


def dry_run(config: RunConfig, *, plugins: PluginManager | None = None) -> DryRunEstimate:
    """The dry run's estimate: ``calls``, ``tokens`` and ``cost``, each mapping every host and judge key
    (and ``total``) to its figure, ``kinds`` (key -> ``host`` or ``judge``), ``estimated`` (the
    evaluators whose counts are estimates), and judge calibration's part: ``conditional`` (evaluators
    whose scoring calls, counted, are made only if their judge passes calibration) and ``not_scored``
    (evaluators whose judge is known untrusted from a cached calibration: their scoring calls are not
    counted). Errors are a real run's (ConfigError and the like)."""
    with tempfile.TemporaryDirectory(prefix="sonar-dry-run-") as folder:
        # Local: the ledger sees the calls only in this process. No gate: a dry run has no outcome.
        dry = config.model_copy(update={"output_dir": folder, "run_id": "dry-run", "executor": "local",
                                        "max_cost": None, "fail_on_problems": None})
        result = execute_run(dry, plugins=plugins, dry=True)
    estimate: DryRunEstimate = dict(result.costs or {})  # type: ignore[assignment]  # a dry run's costs
    estimate["estimated"] = estimated_evaluators(config, plugins)
    # A skipped evaluator asks nothing: say why, or a 0 would read as "all cached".
    estimate["skipped"] = [dict(entry) for entry in result.skipped]
    return estimate


def _number(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def format_estimate(estimate: DryRunEstimate) -> list[str]:
    """The dry run's table as lines: one per host and judge, and the total."""
    kinds = estimate.get("kinds", {})
    rows = [("kind", "key", "calls", "input tokens", "output tokens", "cost (USD)")]
    for key in sorted(kinds, key=lambda k: (kinds[k] != "host", k)):
        tokens = estimate["tokens"][key]
        rows.append((kinds[key], key, _number(estimate["calls"][key]), _number(tokens["input"]),
                     _number(tokens["output"]), _number(estimate["cost"][key], 4)))
    total = estimate["tokens"]["total"]
    rows.append(("total", "", _number(estimate["calls"]["total"]), _number(total["input"]), _number(total["output"]),
                 _number(estimate["cost"]["total"], 4)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             .rstrip() for row in rows]
    lines.append("Nothing was asked: calls still needed after cache lookups; tokens and cost are estimates "
                 "(docs/costs.md). A cost of - has no price (prices:).")
    for label in estimate.get("estimated", []):
        lines.append(f"'{label}' asks in steps that depend on earlier answers: its count is an estimate.")
    for entry in estimate.get("skipped", []):
        lines.append(f"'{entry['evaluator']}' would be skipped: {entry['reason']}")
    lines.extend(judge_gate_lines(estimate))
    return lines


def judge_gate_lines(estimate: JudgeGates) -> list[str]:
    """What the estimate cannot know of judge calibration (docs/judges.md): scoring calls made only if a
    judge measured afresh passes, and evaluators whose judge is already known to be untrusted."""
    lines = []
    for entry in estimate.get("conditional", []):
        lines.append(f"'{entry['evaluator']}': its {entry['calls']:,} scoring call(s) (in the counts above) are made "
                     f"only if judge {entry['judge']} passes calibration (kappa >= {entry['min_kappa']:.2f}), which "
                     "a dry run cannot measure; an untrusted judge's rows are not scored (--score-untrusted "
                     "scores them).")
    for entry in estimate.get("not_scored", []):
        lines.append(f"'{entry['evaluator']}' will not be scored ({entry['reason']}, as calibrated before); "
                     "--score-untrusted scores it anyway.")
    return lines
