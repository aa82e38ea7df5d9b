"""Trajectory match: is the sequence of tools called the expected one, in the chosen sense?

Only tool names count (arguments are tool_call_accuracy's business). With P the names the assistant
called, in order, and R the expected names:

* ``strict``: P equals R, order and repeats included;
* ``unordered``: P and R hold the same names as many times each, in any order;
* ``subset``: every call of P is in R (as a multiset: a tool called twice needs two in R); nothing
  unexpected was called, something expected may be missing;
* ``superset``: every call of R is in P (as a multiset); everything expected was called, extra calls
  are allowed.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult

from .calls import names_of, predicted_calls

__all__ = ["TrajectoryMatchEvaluator", "trajectory_match", "MODES"]

MODES = ("strict", "unordered", "subset", "superset")


def trajectory_match(called: list[str], expected: list[str], mode: str = "strict") -> float:
    """1.0 when ``called`` matches ``expected`` in ``mode`` (see the module docstring), else 0.0."""
    if mode == "strict":
        return float(called == expected)
    have, want = Counter(called), Counter(expected)
    if mode == "unordered":
        return float(have == want)
    if mode == "subset":
        return float(not (have - want))
    if mode == "superset":
        return float(not (want - have))
    raise ValueError(f"unknown mode {mode!r}")


class TrajectoryMatchEvaluator(Evaluator):
    """1 per conversation whose called tool names match the expected ones in the chosen mode."""

    id = "trajectory_match"
    display_name: ClassVar[str] = "Trajectory match"
    tagline: ClassVar[str] = "Did the agent call the expected tools (strict, unordered, subset or superset)?"
    description: ClassVar[str] = (
        "Compares the names of the tools the assistant called, in order, with the names of the expected "
        "tool calls. `strict`: the same sequence; `unordered`: the same tools as many times each, in any "
        "order; `subset`: nothing called that was not expected (counted with repeats); `superset`: every "
        "expected call made (counted with repeats), extra calls allowed. 1 when it matches, else 0."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.CONVERSATION, Input.EXPECTED_TOOL_CALLS)
    compatibility: ClassVar[tuple[str, ...]] = ("llm",)
    category: ClassVar[str] = "Agent"
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("mode", str, "strict", "How the called tool names must match the expected ones: strict, "
              "unordered, subset or superset.", choices=MODES),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("trajectory_match", "Trajectory match", "1 when the called tool names match the expected "
               "ones in the chosen mode, else 0.", threshold=0.5, is_primary=True),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        mode = self.params["mode"]
        out = []
        for row in rows:
            called, expected = names_of(predicted_calls(row)), names_of(row.expected_tool_calls)
            out.append(RowResult(values={"trajectory_match": trajectory_match(called, expected, mode)},
                                 details={"called_tools": called, "expected_tools": expected}))
        return out
