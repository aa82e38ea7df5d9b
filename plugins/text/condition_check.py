"""Checking a row's condition on an answer and its retrieved context, as a pass/fail verdict.

Shared by the evaluators that take the Text Matching condition language from a row (Text
Matching itself, Encoding Guardrail), so that both read the condition and word their
verdicts in the same way.
"""

from __future__ import annotations

from typing import Any

from sonar_core.dataset import Row
from sonar_core.passfail import Verdict

from .conditions import (
    Condition,
    RegexTimeout,
    all_of,
    constraints_condition,
    parse_condition,
)

__all__ = ["CONTEXT_SEPARATOR", "condition_verdict", "row_condition"]

#: Retrieved-context chunks are checked as one text, one chunk per line.
CONTEXT_SEPARATOR = "\n"


def row_condition(row: Row) -> Condition | None:
    """The condition a row asks for: its output_condition AND its output_constraints.

    None when the row has neither.

    Raises:
        ConditionSyntaxError: a malformed condition or constraint pattern.
    """
    parts: list[Condition] = []
    if row.output_condition.strip():
        parts.append(parse_condition(row.output_condition))
    if row.output_constraints:
        parts.append(constraints_condition(row.output_constraints))
    return all_of(*parts) if parts else None


def condition_verdict(
    condition: Condition,
    text: str,
    context: list[str] | None,
    timeout_s: float,
    details: dict[str, Any],
    where: str = "the actual answer",
) -> Verdict:
    """The verdict of ``condition`` on ``text`` and, when given, on the ``context`` chunks.

    ``timeout_s`` bounds each regular-expression search (seconds); one that runs out makes the
    verdict a parse failure. ``context`` None means the context is not checked (``context_ok``
    stays None); its chunks are otherwise joined with :data:`CONTEXT_SEPARATOR`. ``where``
    names the checked text in messages. ``details`` is updated in place (``failed_part``,
    ``context_failed_part``) and becomes the verdict's details.
    """
    try:
        answer = condition.evaluate(text, timeout_s)
    except RegexTimeout as exc:
        return Verdict(parse_error=f"{exc} on {where}", details=details)
    messages: list[str] = []
    if not answer.ok:
        details["failed_part"] = answer.failed_part
        messages.append(f"condition part '{answer.failed_part}' did not match {where}")

    context_ok: bool | None = None
    if context is not None:
        try:
            outcome = condition.evaluate(CONTEXT_SEPARATOR.join(context), timeout_s)
        except RegexTimeout as exc:
            return Verdict(parse_error=f"{exc} on the retrieved context", details=details)
        context_ok = outcome.ok
        if not outcome.ok:
            details["context_failed_part"] = outcome.failed_part
            messages.append(f"condition part '{outcome.failed_part}' did not match the retrieved context")

    return Verdict(
        answer_ok=answer.ok,
        context_ok=context_ok,
        error_message="; ".join(messages) or None,
        details=details,
    )
