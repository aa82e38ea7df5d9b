"""The catalogue's five inputs, as dataset field names.

A ground module: the dataset validates rows by these names and the evaluator contract declares
required inputs with them, so both import it and neither imports the other. Plugins reach
:class:`Input` through :mod:`sonar_core` (or :mod:`sonar_core.contract`, which re-exports it).
"""

from __future__ import annotations

import enum

__all__ = ["Input", "CATALOGUE_INPUTS"]


class Input(str, enum.Enum):
    """The five inputs of the catalogue, as dataset field names."""

    QUESTION = "question"
    EXPECTED_ANSWER = "expected_answer"
    RETRIEVED_CONTEXT = "retrieved_context"
    ACTUAL_ANSWER = "actual_answer"
    CONDITIONS = "conditions"
    #: The turns of a multi-turn case (sonar_core.conversation).
    CONVERSATION = "conversation"
    #: The reference tool calls of a conversation, in order.
    EXPECTED_TOOL_CALLS = "expected_tool_calls"
    #: What a conversation should achieve, in words (goal accuracy).
    EXPECTED_OUTCOME = "expected_outcome"

    @property
    def short(self) -> str:
        """The catalogue's column abbreviation (Q, EA, RC, AA, C)."""
        return {
            "question": "Q",
            "expected_answer": "EA",
            "retrieved_context": "RC",
            "actual_answer": "AA",
            "conditions": "C",
            "conversation": "CV",
            "expected_tool_calls": "TC",
            "expected_outcome": "EO",
        }[self.value]

    @property
    def keyword(self) -> str:
        """The H2O Sonar descriptor keyword for this requirement."""
        return {
            "question": "requires_prompts",
            "expected_answer": "requires_expected_answer",
            "retrieved_context": "requires_retrieved_context",
            "actual_answer": "requires_actual_answer",
            "conditions": "requires_constraints",
            "conversation": "requires_conversation",
            "expected_tool_calls": "requires_expected_tool_calls",
            "expected_outcome": "requires_expected_outcome",
        }[self.value]

    @property
    def label(self) -> str:
        """The input's name in words (*expected tool calls*)."""
        return self.value.replace("_", " ")


#: The catalogue's five inputs (its requirement tables have one column each); the conversation
#: inputs follow them in :class:`Input` and show only where an evaluator needs them.
CATALOGUE_INPUTS: tuple[Input, ...] = (Input.QUESTION, Input.EXPECTED_ANSWER, Input.RETRIEVED_CONTEXT,
                                       Input.ACTUAL_ANSWER, Input.CONDITIONS)
