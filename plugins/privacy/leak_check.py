"""Turning pattern matches in a row's answer and retrieved context into a pass/fail verdict.

The PII, sensitive-data and encoding-guardrail evaluators all search the actual answer and,
unless switched off, each retrieved-context chunk with a pattern suite; any match in the
answer fails the row, any match in the context is a retrieval failure. This module holds
that shared step so the three evaluators report leaks in the same shape.
"""

from __future__ import annotations

from typing import Callable, Sequence

from sonar_core import Param, Row, Verdict
from sonar_plugins.text.condition_check import checked_context

from .matches import TextMatch

__all__ = [
    "EVALUATE_RETRIEVED_CONTEXT",
    "MAX_LISTED_MATCHES",
    "describe",
    "find_in_context",
    "leak_verdict",
    "row_leak_verdict",
]

#: At most this many matches per side are listed in a row's details (the counts are exact).
MAX_LISTED_MATCHES = 100

EVALUATE_RETRIEVED_CONTEXT = Param(
    "evaluate_retrieved_context",
    bool,
    True,
    "Also check the retrieved context (RAG): a leak found there is counted as a retrieval "
    "failure. The actual answer is always checked.",
)

Finder = Callable[[str], Sequence[TextMatch]]


def find_in_context(chunks: Sequence[str], finder: Finder) -> list[tuple[int, TextMatch]]:
    """Matches in each chunk separately (a match never spans two chunks), with chunk index."""
    return [(i, match) for i, chunk in enumerate(chunks) for match in finder(chunk)]


def describe(matches: Sequence[TextMatch]) -> str:
    """``kind masked, kind masked...`` for an error message (at most the listed maximum)."""
    shown = ", ".join(f"{m.kind} {m.masked}" for m in matches[:MAX_LISTED_MATCHES])
    more = len(matches) - MAX_LISTED_MATCHES
    return shown + (f" and {more} more" if more > 0 else "")


def leak_verdict(
    answer: str,
    context: Sequence[str] | None,
    finder: Finder,
    what: str,
    where: str = "the actual answer",
) -> Verdict:
    """Search ``answer`` (and each ``context`` chunk) with ``finder`` and judge the row.

    Args:
        answer: the text to check as the answer; an empty answer holds nothing and passes.
        context: the retrieved-context chunks to check, or None when the context is not
            checked (switched off, or the row has none): the verdict's ``context_ok`` is
            then None.
        finder: text -> matches, e.g. :func:`.pii_patterns.find_pii`.
        what: the noun for the error message ("PII", "Sensitive data").
        where: how the error message names the answer.

    Returns:
        A verdict whose details hold ``answer_matches`` and ``context_matches`` (lists of
        ``{"kind", "masked"}``; context entries add the chunk index ``chunk``, from 0) and
        the exact ``answer_match_count`` and ``context_match_count``.
    """
    answer_matches = list(finder(answer or ""))
    context_matches = find_in_context(context, finder) if context is not None else []
    details = {
        "answer_matches": [m.as_detail() for m in answer_matches[:MAX_LISTED_MATCHES]],
        "context_matches": [
            {**m.as_detail(), "chunk": i} for i, m in context_matches[:MAX_LISTED_MATCHES]
        ],
        "answer_match_count": len(answer_matches),
        "context_match_count": len(context_matches),
    }
    parts = []
    if answer_matches:
        parts.append(f"{what} leaked in {where}: {describe(answer_matches)}")
    if context_matches:
        chunks = sorted({i for i, _ in context_matches})
        parts.append(
            f"{what} in the retrieved context (chunk {', '.join(str(i) for i in chunks)}): "
            f"{describe([m for _, m in context_matches])}"
        )
    return Verdict(
        answer_ok=not answer_matches,
        context_ok=(not context_matches) if context is not None else None,
        error_message="; ".join(parts) or None,
        details=details,
    )


def row_leak_verdict(row: Row, finder: Finder, check_context: bool, what: str) -> Verdict:
    """:func:`leak_verdict` on the row's actual answer and (when enabled) its context."""
    return leak_verdict(row.actual_output or "", checked_context(row, check_context), finder, what)
