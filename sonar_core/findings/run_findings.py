"""What a run concludes over all its evaluators: the best model overall, problem counts, the gate.

These read only the evaluators' findings (their leaderboard rankings and problem severities), so
they work the same on a run in progress, a finished one, and one resumed from its files.
"""

from __future__ import annotations

from typing import Any, Iterable

from .problems import SEVERITIES, SEVERITY_ORDER

__all__ = ["best_model", "count_severities", "problem_counts", "gating_problems"]


def best_model(rankings: Iterable[list[str]]) -> tuple[str | None, int]:
    """The model with the lowest mean rank over the rankings of more than one model, and how many
    rankings counted. Ties go to the model name."""
    ranks: dict[str, list[int]] = {}
    counted = 0
    for ranking in rankings:
        if len(ranking) < 2:
            continue
        counted += 1
        for position, model in enumerate(ranking, start=1):
            ranks.setdefault(model, []).append(position)
    if not ranks:
        return None, 0
    return min(ranks, key=lambda m: (sum(ranks[m]) / len(ranks[m]), m)), counted


def count_severities(severities: Iterable[str]) -> dict[str, int]:
    """Severity -> how many, every known severity present (0 when none)."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1
    return counts


def problem_counts(problems: Iterable[dict[str, Any]]) -> dict[str, int]:
    return count_severities(p["severity"] for p in problems)


def gating_problems(problems: Iterable[dict[str, Any]], fail_on: str) -> list[dict[str, Any]]:
    """The problems at or above severity ``fail_on`` (``--fail-on-problems``)."""
    limit = SEVERITY_ORDER[fail_on]
    return [p for p in problems if SEVERITY_ORDER.get(p["severity"], 9) <= limit]
