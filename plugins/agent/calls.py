"""The tool calls of a row: what the assistant called and what the reference expects.

Shared by the agent evaluators. A row's conversation and expected tool calls were checked when the
dataset was loaded (sonar_core.conversation), so each call here is ``{"name": str, "arguments":
dict}``.
"""

from __future__ import annotations

from typing import Any

from sonar_core import Row

__all__ = ["predicted_calls", "names_of"]


def predicted_calls(row: Row) -> list[dict[str, Any]]:
    """Every tool call of the row's assistant turns, in conversation order."""
    return [call for turn in row.conversation if turn["role"] == "assistant" for call in turn.get("tool_calls", ())]


def names_of(calls: list[dict[str, Any]]) -> list[str]:
    return [call["name"] for call in calls]
