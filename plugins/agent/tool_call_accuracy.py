"""Tool call accuracy: are the right tools called, in order, with the right arguments?

The semantics of ragas 0.4's ``ToolCallAccuracy``, computed without ragas (a test holds the two equal
on generated conversations covering every edge case):

* no calls on either side scores 1; no predicted calls, or predicted calls with no reference, 0;
* with ``strict_order`` false both lists are first sorted by (name, then each argument name and its
  value as text, argument names sorted);
* the sequences of tool names must align (equal; as multisets when not strict), else the score is 0;
* otherwise the calls are paired position by position; a pair with the same name scores the share of
  the reference's arguments the predicted call gives with an equal value (compared as text, Python's
  ``str``; a call with no arguments on either side scores 1), and the sum is divided by the number of
  reference calls (and multiplied by compared / reference calls when fewer were compared).
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult

from .calls import names_of, predicted_calls

__all__ = ["ToolCallAccuracyEvaluator", "tool_call_accuracy"]


def _argument_score(predicted: dict[str, Any], reference: dict[str, Any]) -> float:
    if not reference and not predicted:
        return 1.0
    if not reference:
        return 0.0
    score = 0.0
    for name in reference:
        if name in predicted:
            score += float(str(predicted[name]) == str(reference[name]))
    return score / len(reference)


def _sort_key(call: dict[str, Any]) -> tuple[str, ...]:
    key = [call["name"]]
    arguments = call["arguments"]
    for name in sorted(arguments):
        key += [name, str(arguments[name])]
    return tuple(key)


def tool_call_accuracy(predicted: list[dict[str, Any]], reference: list[dict[str, Any]], strict_order: bool = True) -> float:
    """ragas 0.4 ``ToolCallAccuracy`` of ``predicted`` against ``reference`` calls (see the module docstring)."""
    if not predicted and not reference:
        return 1.0
    if not predicted or not reference:
        return 0.0
    if not strict_order:
        predicted, reference = sorted(predicted, key=_sort_key), sorted(reference, key=_sort_key)
    predicted_names, reference_names = names_of(predicted), names_of(reference)
    aligned = predicted_names == reference_names if strict_order else sorted(predicted_names) == sorted(reference_names)
    score = 0.0
    for ref, pred in zip(reference, predicted):
        if ref["name"] == pred["name"]:
            score += _argument_score(pred["arguments"], ref["arguments"])
    score /= len(reference)
    compared = min(len(predicted), len(reference))
    if compared < len(reference):
        score *= compared / len(reference)
    return score * int(aligned)


class ToolCallAccuracyEvaluator(Evaluator):
    """ragas's tool call accuracy of each conversation against its expected tool calls."""

    id = "tool_call_accuracy"
    display_name: ClassVar[str] = "Tool call accuracy"
    tagline: ClassVar[str] = "The right tools, in order, with the right arguments (ragas ToolCallAccuracy)."
    description: ClassVar[str] = (
        "Compares the tool calls the assistant made in the conversation with the expected tool calls. "
        "The sequences of tool names must match (in order with `strict_order`, as multisets without), "
        "else the score is 0; otherwise each call paired by position with a reference call of the same "
        "name scores the share of the reference's arguments it repeats exactly, the sum is divided by "
        "the number of reference calls, and fewer calls than the reference are penalised by "
        "compared / expected. No calls on either side scores 1; calls where none were expected, or none "
        "where some were, score 0. Values equal ragas 0.4's `ToolCallAccuracy`."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.CONVERSATION, Input.EXPECTED_TOOL_CALLS)
    compatibility: ClassVar[tuple[str, ...]] = ("llm",)
    category: ClassVar[str] = "Agent"
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("strict_order", bool, True, "Tool calls must come in the reference's order; when false, both "
              "lists are sorted first and the names compared as multisets."),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("tool_call_accuracy", "Tool call accuracy", "Aligned tool names times the mean exact-match "
               "share of each reference call's arguments, penalised for missing calls.", threshold=0.75,
               is_primary=True),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        strict = self.params["strict_order"]
        out = []
        for row in rows:
            predicted = predicted_calls(row)
            score = tool_call_accuracy(predicted, row.expected_tool_calls, strict)
            # The tools called, where they fell short, say why (a perfect row needs no explaining; the
            # expected calls are the test case's, in the dataset).
            out.append(RowResult(values={"tool_call_accuracy": score},
                                 details={} if score == 1.0 else {"called_tools": names_of(predicted)}))
        return out
