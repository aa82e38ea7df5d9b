"""Text Matching: does the answer (and the retrieved context) satisfy the row's condition?

The condition comes from the row: its ``output_condition`` (the boolean language of
:mod:`.conditions`), its ``output_constraints`` (strings that must all appear), or both, in
which case both must hold. Each row gets a verdict; :class:`PassFailEvaluator` turns it into
0/1 values of the five pass/fail metrics, whose per-model means are shares of rows.
"""

from __future__ import annotations

from typing import ClassVar

from sonar_core import Difference, Input, Metric, MetricRole, Param, PassFailEvaluator, Row, Verdict

from .condition_check import REGEX_TIMEOUT_S, checked_context, row_condition_verdict

__all__ = ["TextMatchingEvaluator"]


class TextMatchingEvaluator(PassFailEvaluator):
    """Checks each row's condition on the actual answer and, optionally, the retrieved context."""

    id = "text_matching"
    display_name: ClassVar[str] = "Text matching"
    tagline: ClassVar[str] = "Check that answers contain, or avoid, the strings and patterns a test case asks for."
    description: ClassVar[str] = (
        "Checks every answer against the test case's condition: a boolean expression whose "
        'operands are quoted strings (`"15,969"`, a case-sensitive substring test) and regular '
        'expressions (`regexp("15,?969")`, searched anywhere in the text), combined with `AND`, '
        "`OR`, `NOT` and parentheses. A test case may instead list `output_constraints`, strings "
        "that must all appear; when it has both, both must hold.\n\n"
        "A row passes when its actual answer satisfies the condition. When retrieved context is "
        "present (and `evaluate_retrieved_context` is on), the condition is also checked on the "
        "context, and a context that fails counts as a retrieval failure. A malformed condition or "
        "a regular expression that runs out of time is a parse failure for that row, with the "
        "reason in its error message. Models are ranked by the share of rows that pass."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.ACTUAL_ANSWER, Input.CONDITIONS)
    optional_inputs: ClassVar[tuple[Input, ...]] = (Input.RETRIEVED_CONTEXT,)
    #: Time bound of one regular-expression search, in seconds (an instance may shorten it).
    regex_timeout_s: float = REGEX_TIMEOUT_S
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "evaluate_retrieved_context",
            bool,
            True,
            "Also check the condition on the retrieved context (its chunks joined one per line) "
            "where a row has one; a context that fails the condition is a retrieval failure.",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "model_passes",
            "Model passes",
            "Share of rows whose actual answer satisfies the condition (1 per passing row, else 0).",
            higher_is_better=True,
            threshold=0.5,
            is_primary=True,
            role=MetricRole.PASS,
        ),
        Metric(
            "model_failures",
            "Model failures",
            "Share of rows whose actual answer does not satisfy the condition.",
            higher_is_better=False,
            threshold=0.5,
            role=MetricRole.FAIL,
            # Fails exactly when model_passes fails (both count the same rows): no extra problems.
            raises_problems=False,
        ),
        Metric(
            "model_retrieval_failures",
            "Model retrieval failures",
            "Share of rows whose retrieved context does not satisfy the condition "
            "(0 for rows without context or when context checking is off).",
            higher_is_better=False,
            threshold=0.5,
            role=MetricRole.RETRIEVAL_FAILURE,
        ),
        Metric(
            "model_generation_failures",
            "Model generation failures",
            "Share of rows whose generated answer does not satisfy the condition "
            "(the same rows as model failures).",
            higher_is_better=False,
            threshold=0.5,
            role=MetricRole.GENERATION_FAILURE,
            raises_problems=False,
        ),
        Metric(
            "model_parse_failures",
            "Model parse failures",
            "Share of rows that could not be checked: malformed condition, invalid or "
            "timed-out regular expression, or no condition at all.",
            higher_is_better=False,
            threshold=0.5,
            role=MetricRole.PARSE_FAILURE,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            what="inputs: the catalogue requires the retrieved context; Sonar requires only the actual answer "
                 "and its condition, and checks the retrieved context when a row has one",
            why="text matching is as useful on an LLM dataset (no retrieval); `evaluate_retrieved_context` "
                "turns the context check off",
            action="on rows without a retrieved context the retrieval failure metric is 0, not missing",
            field="inputs",
        ),
    )

    def check(self, row: Row) -> Verdict:
        # The same detail keys on every row, so they line up as columns of the results.
        # (PassFailEvaluator fills parse_error in on parse failures.)
        details = {
            "condition": row.output_condition or None,
            "failed_part": None,
            "context_failed_part": None,
            "parse_error": None,
        }
        context = checked_context(row, self.params["evaluate_retrieved_context"])
        verdict = row_condition_verdict(row, row.actual_output or "", context, self.regex_timeout_s, details)
        if verdict is None:
            # The core skips rows without conditions; one that gets here is still not checkable.
            return Verdict(
                parse_error="no condition to check: the row has neither output_condition nor output_constraints",
                details=details,
            )
        return verdict
