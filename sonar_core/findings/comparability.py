"""Whether two runs can be compared at all, before anything is computed (``sonar compare``).

Refused, one line each (exit 3), unless ``--allow-partial``:

- a run that did not finish: its status is ``running`` (killed, or still going) or ``stopped_by_budget``,
  or an evaluator it scheduled has no finished folder (never started before the run stopped, or listed
  as finished without its done marker). Comparing it would list its missing evaluators as "not run" and
  compare a half-run's rows as if they were all;
- two runs with nothing to pair: no model in common, no test case in common, or no evaluator with the
  same id and parameters.

With ``--allow-partial`` the comparison is made of what is finished and comparable, and says what is not
(:func:`comparability_notes`): the comparison's ``partial`` (per run, the evaluators that did not finish,
and why) and ``not_comparable`` (why nothing, or less, pairs up).
"""

from __future__ import annotations

from .comparison_types import PartialRun
from .run_data import RunData

__all__ = ["IncompatibleRuns", "IncompleteRun", "check_comparable", "not_comparable"]

#: Names listed in a one-line error, at most.
_SHOWN = 5


class IncompatibleRuns(ValueError):
    """The two runs cannot be compared (different Sonar versions or schemas, nothing in common); one line."""


class IncompleteRun(IncompatibleRuns):
    """A run did not finish (``--allow-partial`` compares its finished evaluators); one line."""


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "") if items else "none"


def _why_unfinished(run: RunData) -> str:
    parts = [] if run.status in ("success", "failed") else [f"status {run.status}"]
    if run.not_finished:
        parts.append(f"{len(run.not_finished)} evaluator(s) not finished: {_names(sorted(run.not_finished))}")
    return "; ".join(parts)


def not_comparable(a: RunData, b: RunData, evaluators_matched: int) -> list[str]:
    """Why the two runs' rows cannot be paired (empty when some can)."""
    models_b, cases_b = set(b.models), set(b.test_cases)
    reasons = []
    if not any(m in models_b for m in a.models):
        reasons.append(f"the runs share no model (A: {_names(a.models)}; B: {_names(b.models)})")
    if not any(c in cases_b for c in a.test_cases):
        reasons.append(f"the runs share no test case (A has {len(a.test_cases)}, B {len(b.test_cases)})")
    if not evaluators_matched:
        reasons.append("no evaluator ran with the same id and parameters in both runs")
    return reasons


def check_comparable(a: RunData, b: RunData, evaluators_matched: int,
                     allow_partial: bool) -> tuple[dict[str, PartialRun], list[str]]:
    """The comparison's ``partial`` (side "a"/"b" -> the run that did not finish) and ``not_comparable``
    (why nothing, or less, pairs up); raises IncompleteRun or IncompatibleRuns
    (one line) where the module docstring says, unless ``allow_partial``."""
    for side, run in (("A", a), ("B", b)):
        if not run.finished and not allow_partial:
            raise IncompleteRun(f"{run.path}: run {side} did not finish ({_why_unfinished(run)}); resume it with "
                                "`sonar run --resume`, or compare its finished evaluators with --allow-partial")
    reasons = not_comparable(a, b, evaluators_matched)
    if reasons and not allow_partial:
        raise IncompatibleRuns(f"{'; '.join(reasons)}: nothing to compare (--allow-partial writes the comparison "
                               "anyway, saying so)")
    return ({side: PartialRun(run.status, dict(run.not_finished)) for side, run in (("a", a), ("b", b))
             if not run.finished}, reasons)
