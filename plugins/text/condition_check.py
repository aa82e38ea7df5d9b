"""Checking a row's condition on an answer and its retrieved context, as a pass/fail verdict.

Shared by the evaluators that take the Text Matching condition language from a row (Text
Matching itself, Encoding Guardrail), so that both read the condition and word their
verdicts in the same way. :func:`checked_context` (which retrieved-context chunks a row has
to check) also serves the privacy evaluators' pattern checks.
"""

from __future__ import annotations

from typing import Any

from sonar_core import Input, Row, Verdict

from .conditions import (
    Condition,
    ConditionSyntaxError,
    RegexTimeout,
    all_of,
    constraints_condition,
    parse_condition,
)

__all__ = [
    "CONTEXT_SEPARATOR",
    "REGEX_TIMEOUT_S",
    "checked_context",
    "condition_verdict",
    "row_condition",
    "row_condition_verdict",
]

#: Retrieved-context chunks are checked as one text, one chunk per line.
CONTEXT_SEPARATOR = "\n"
#: Time bound, in seconds, of one regular-expression search: a pattern that backtracks without end
#: makes its row a parse failure instead of holding up the run.
REGEX_TIMEOUT_S = 1.0


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


def checked_context(row: Row, enabled: bool) -> list[str] | None:
    """The row's retrieved-context chunks to check, or None when checking is off or it has none."""
    return list(row.context) if enabled and row.has_input(Input.RETRIEVED_CONTEXT) else None


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


def row_condition_verdict(
    row: Row,
    text: str,
    context: list[str] | None,
    timeout_s: float,
    details: dict[str, Any],
    where: str = "the actual answer",
) -> Verdict | None:
    """The verdict of the row's condition (:func:`row_condition`) on ``text`` and ``context``.

    None when the row has no condition, with ``details`` untouched. A malformed condition is
    a parse failure, ``malformed condition: <reason>``. Otherwise as :func:`condition_verdict`
    (same arguments and units). ``details["condition"]`` is set to the checked condition's
    source, or to the row's ``output_condition`` (None when blank) when it is malformed.
    """
    try:
        condition = row_condition(row)
    except ConditionSyntaxError as exc:
        details["condition"] = row.output_condition or None
        return Verdict(parse_error=f"malformed condition: {exc}", details=details)
    if condition is None:
        return None
    details["condition"] = condition.source
    return condition_verdict(condition, text, context, timeout_s, details, where)
