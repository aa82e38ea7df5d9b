"""The problems index.html leads with: one line per evaluator that has some, most severe first.

:func:`lead_problems` reads only severities (the core's own problems, about the models under test,
and each evaluator's, in run order) and concludes which lines to show and in what order; the page
(:func:`sonar_core.artifacts.html.lead_view`) writes each line with its evaluator and its most
severe problem's text.
"""

from __future__ import annotations

from typing import Sequence

from .types import SEVERITY_ORDER, LeadLine, LeadProblems

__all__ = ["LEAD_PROBLEMS_LIMIT", "lead_problems"]

#: How many evaluators' problems index.html sums up at its top, most severe first (each section lists its own).
LEAD_PROBLEMS_LIMIT = 10


def lead_problems(core: Sequence[str], evaluators: Sequence[Sequence[str]],
                  limit: int = LEAD_PROBLEMS_LIMIT) -> LeadProblems:
    """The lead lines from the severities of the core's problems and of each evaluator's (in run order).

    Each line: the source's most severe problem (the first of that severity) and how many it has of
    each severity. ``shown``: at most ``limit`` lines, the most severe first (then the most problems of
    that severity, then run order, the core's first); ``total``: the problems in all; ``sources``: how
    many evaluators (and the core) have some.
    """
    groups = ([(None, list(core))] if core else []) + [(n, list(s)) for n, s in enumerate(evaluators)]
    lines = []
    for order, (source, severities) in enumerate((g for g in groups if g[1])):
        worst = min(range(len(severities)), key=lambda i: SEVERITY_ORDER.get(severities[i], 9))
        severity = severities[worst]
        counts = {s: sum(1 for found in severities if found == s) for s in SEVERITY_ORDER}
        rank = SEVERITY_ORDER.get(severity, 9)
        lines.append(((rank, -counts.get(severity, 0), order), LeadLine(
            severity=severity, source=source, worst=worst,
            counts=" · ".join(f"{n} {s.lower()}" for s, n in counts.items() if n))))
    lines.sort(key=lambda line: line[0])
    return LeadProblems(total=sum(len(s) for _, s in groups), sources=len(lines),
                        shown=tuple(line for _, line in lines[:limit]))
