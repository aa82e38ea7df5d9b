"""What a run concludes over all its evaluators: the best model overall, problem counts, the gate.

These read only the evaluators' findings (their leaderboard rankings and problem severities), so
they work the same on a run in progress, a finished one, and one resumed from its files.
"""

from __future__ import annotations

from typing import Any, Iterable

from .problems import SEVERITIES, SEVERITY_ORDER

__all__ = ["best_model", "best_model_card", "count_severities", "problem_counts", "gating_problems"]


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


def best_model_card(rankings: Iterable[list[str]], models: list[str], untrusted: int = 0) -> dict[str, Any]:
    """What the report's headline says about the best model overall: ``title``, ``model`` (None when
    there is none) and ``note``, which says what the choice rests on, or why there is no choice.

    ``untrusted``: how many evaluators' judges are untrusted (their boards rank no model). A run of
    one model has no best model: its card names the model under test instead.
    """
    best, counted = best_model(rankings)
    if best is not None:
        return {"title": "Best model overall", "model": best,
                "note": f"lowest mean rank over {counted} evaluator{'s' if counted != 1 else ''}"}
    if len(models) == 1:
        return {"title": "Model under test", "model": models[0],
                "note": "one model: no other to rank it against, so no best model overall"}
    why = "no evaluator ranks the models"
    if untrusted:
        why += f" ({untrusted} untrusted judge{'s' if untrusted != 1 else ''} rank{'' if untrusted != 1 else 's'} none)"
    return {"title": "Best model overall", "model": None, "note": f"none: {why}"}


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
