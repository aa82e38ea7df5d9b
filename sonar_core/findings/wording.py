"""How the reports write a figure the findings concluded: text formatting only, no conclusion.

These take a number and return the words every report uses for it, so that the findings' own
sentences (an insight's "p = 0.012") and the writers' tables agree. The artifact writers may
import this module (tests/core/test_findings_types.py): nothing here decides anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..contract import RowResult

__all__ = ["p_text", "kappa_bar", "row_why", "turn_summary"]


def p_text(p: float) -> str:
    """A p-value as the reports write it: ``p = 0.21``, ``p = 0.012``, ``p < 0.001``."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def kappa_bar(kappa: float, min_kappa: float) -> str:
    """A judge's kappa beside the bar it missed, as the reports print it: ``κ = 0.00, needs κ ≥ 0.40``."""
    return f"κ = {kappa:.2f}, needs κ ≥ {min_kappa:.2f}"


def row_why(result: RowResult) -> str:
    """Why a row scored as it did: the evaluator's message, else its non-empty details.

    Evaluators with ``sensitive_outputs`` mask what they found in both, so this text may be
    shown where their answers are withheld.
    """
    return result.error_message or "; ".join(f"{k}: {v}" for k, v in result.details.items() if v)


def turn_summary(result: RowResult, metric: str) -> str:
    """A per-turn result in words: ``mean of 2 turns, min 0.40 (turn 2: 0.80, turn 4: 0.40)``;
    empty for a result scored whole."""
    turns = result.details.get("per_turn") if isinstance(result.details, dict) else None
    if not turns:
        return ""
    parts = [f"turn {t['turn']}: " + ("n/a" if t["values"].get(metric) is None else f"{t['values'][metric]:.2f}")
             for t in turns]
    low = result.details.get("per_turn_min", {}).get(metric)
    minimum = "" if low is None else f", min {low:.2f}"
    return f"mean of {len(turns)} turn{'s' if len(turns) != 1 else ''}{minimum} ({', '.join(parts)})"
