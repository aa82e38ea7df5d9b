"""Rows an evaluator scored with a fallback: a model standing in for an absent one (e.g. toxicity on
alt-profanity-check when detoxify's checkpoint is absent).

The evaluator only marks such rows (``RowResult.details[FALLBACK_DETAIL]``, one sentence saying what was
measured and what was not); the core concludes from the marks: one LOW problem per sentence, the
sentences in the evaluator's section and run.json, and ``--strict`` stops the run on them.
"""

from __future__ import annotations

from ..contract import FALLBACK_DETAIL
from .problems import make_problem
from .types import Problem
from .scored import ScoredEvaluator

__all__ = ["fallback_notes", "fallback_problems"]


def _counts(ev: ScoredEvaluator) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, result in ev.scored:
        note = result.details.get(FALLBACK_DETAIL)
        if note:
            counts[str(note)] = counts.get(str(note), 0) + 1
    return counts


def fallback_notes(ev: ScoredEvaluator) -> tuple[str, ...]:
    """What the evaluator's fallbacks did not measure, one sentence per fallback, in the order first met."""
    return tuple(_counts(ev))


def fallback_problems(ev: ScoredEvaluator) -> list[Problem]:
    """One LOW problem per fallback sentence, naming how many rows it scored."""
    return [
        make_problem(
            ev,
            description=note,
            severity="LOW",
            problem_type=ev.cls.problem_type,
            actions=(f"{rows} row(s) were scored by a fallback model, not the catalogue's: provide the evaluator's "
                     f"model (`sonar describe {ev.cls.id}`) to measure everything, or run with --strict to stop on it."),
            attrs={"fallback_rows": rows},
        )
        for note, rows in _counts(ev).items()
    ]
