"""What a run concludes over all its evaluators: the best model overall, problem counts, the gate.

These read only the evaluators' findings (their leaderboard rankings and problem severities), so
they work the same on a run in progress, a finished one, and one resumed from its files.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence, TypedDict, TypeVar

from .tradeoff import tradeoff_rows
from .types import SEVERITIES, SEVERITY_ORDER, BestModel, Leaderboard, RunFindings


class Card(TypedDict):
    """The headline about the best model: its ``title``, the ``model`` (None when none) and the ``note``."""

    title: str
    model: str | None
    note: str


class Severe(TypedDict):
    """What the counts and the gate read of a problem as its file holds it (H2O's problem item has it)."""

    severity: str


_P = TypeVar("_P", bound=Severe)

__all__ = ["best_model", "best_model_card", "count_severities", "problem_counts", "gating_problems", "run_findings"]


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


def best_model_card(rankings: Iterable[list[str]], models: list[str], untrusted: int = 0) -> Card:
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


def problem_counts(problems: Iterable[Severe]) -> dict[str, int]:
    return count_severities(p["severity"] for p in problems)


def gating_problems(problems: Iterable[_P], fail_on: str) -> list[_P]:
    """The problems at or above severity ``fail_on`` (``--fail-on-problems``)."""
    limit = SEVERITY_ORDER[fail_on]
    return [p for p in problems if SEVERITY_ORDER.get(p["severity"], 9) <= limit]


def run_findings(boards: Sequence[Leaderboard], models: list[str], severities: Iterable[str],
                 stats: Mapping[str, Mapping[str, Any]] | None = None) -> RunFindings:
    """What the run concludes from its evaluators' ``boards`` (run order): the best model over their
    rankings (``models``: the models under test), the problems per severity (``severities``: every
    problem's, the core's own included) and, given ``stats`` (model -> ``mean_time``, ``mean_cost``),
    the quality / cost / speed trade-off."""
    rankings = [list(board.ranking) for board in boards]
    best, counted = best_model(rankings)
    card = best_model_card(rankings, models, sum(1 for board in boards if board.untrusted))
    return RunFindings(best=BestModel(model=best, counted=counted, title=card["title"], named=card["model"],
                                      note=card["note"]),
                       severity_counts=count_severities(severities),
                       tradeoff=tradeoff_rows(boards, stats) if stats is not None else ())
