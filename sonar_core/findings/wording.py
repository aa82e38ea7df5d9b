"""How the reports write a figure the findings concluded: text formatting only, no conclusion.

These take a number and return the words every report uses for it, so that the findings' own
sentences (an insight's "p = 0.012") and the writers' tables agree. The artifact writers may
import this module (tests/core/test_findings_types.py): nothing here decides anything.
"""

from __future__ import annotations

__all__ = ["p_text", "kappa_bar"]


def p_text(p: float) -> str:
    """A p-value as the reports write it: ``p = 0.21``, ``p = 0.012``, ``p < 0.001``."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def kappa_bar(kappa: float, min_kappa: float) -> str:
    """A judge's kappa beside the bar it missed, as the reports print it: ``κ = 0.00, needs κ ≥ 0.40``."""
    return f"κ = {kappa:.2f}, needs κ ≥ {min_kappa:.2f}"
