"""Tool call F1: precision and recall of the distinct (tool, arguments) calls made.

ragas 0.4's ``ToolCallF1``: the predicted and the expected calls each become a set of (name,
arguments) pairs (arguments compared as values, nested lists and objects included; a call repeated
counts once); F1 of the two sets, rounded to 4 decimals as ragas rounds (0 when both are empty).
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Row, RowResult

from .calls import names_of, predicted_calls

__all__ = ["ToolCallF1Evaluator", "tool_call_f1"]


def _hashable(value: Any) -> Any:
    """A value as something a set can hold, equal where the values are equal (ragas's rule)."""
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set):
        return frozenset(_hashable(v) for v in value)
    return value


def tool_call_f1(predicted: list[dict[str, Any]], reference: list[dict[str, Any]]) -> float:
    """F1 of the sets of (name, arguments) of ``predicted`` and ``reference``, rounded to 4 places."""
    expected = {(call["name"], _hashable(call["arguments"])) for call in reference}
    actual = {(call["name"], _hashable(call["arguments"])) for call in predicted}
    tp = len(actual & expected)
    fp = len(actual - expected)
    fn = len(expected - actual)
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return round(f1, 4)


class ToolCallF1Evaluator(Evaluator):
    """ragas's tool call F1 of each conversation against its expected tool calls."""

    id = "tool_call_f1"
    display_name: ClassVar[str] = "Tool call F1"
    tagline: ClassVar[str] = "F1 of the distinct tool calls made against those expected (ragas ToolCallF1)."
    description: ClassVar[str] = (
        "Treats the assistant's tool calls and the expected tool calls as two sets of (tool name, "
        "arguments) pairs, order and repeats ignored, and scores their F1: precision is the share of "
        "the calls made that were expected, recall the share of the expected calls that were made. "
        "Rounded to 4 decimals; 0 when neither side has a call. Values equal ragas 0.4's `ToolCallF1`."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.CONVERSATION, Input.EXPECTED_TOOL_CALLS)
    compatibility: ClassVar[tuple[str, ...]] = ("llm",)
    category: ClassVar[str] = "Agent"
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("tool_call_f1", "Tool call F1", "F1 of the set of (name, arguments) calls made against the "
               "expected set.", threshold=0.75, is_primary=True),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        out = []
        for row in rows:
            predicted = predicted_calls(row)
            out.append(RowResult(values={"tool_call_f1": tool_call_f1(predicted, row.expected_tool_calls)},
                                 details={"called_tools": names_of(predicted)}))
        return out
