"""One turn of a conversation asked of a host: the whole history, the tools it may call, and the
assistant turn that comes back (text and tool calls).

Only hosts that speak the OpenAI chat protocol can hold a conversation (``openai_chat``): the history
goes as OpenAI messages (an assistant turn's calls as ``tool_calls`` with JSON-text arguments, a tool
turn with its ``tool_call_id``) and the tools as ``tools``. The request goes through the host's own
LLM client, so every turn is cached (keyed by the whole history and the tools), paced, retried and
journaled as any answer of that host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..conversation import ToolCall, ToolDeclaration, Turn
from ..llm.backends import TOOLS_ROLE
from ..llm.requests import CallTags, ChatMessage, LLMRequest
from .base import Host

__all__ = ["AssistantTurn", "openai_messages", "ask_turn", "can_converse"]


@dataclass
class AssistantTurn:
    """What the host answered to one turn: its text and tool calls (arguments as objects), or an error."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None
    cached: bool = False
    duration: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None


def can_converse(host: Host) -> bool:
    """Whether ``host`` can be asked a conversation: an OpenAI-compatible chat host, or a Python agent
    (a ``python`` host with ``chat: true``)."""
    if getattr(host, "client", None) is None:
        return False
    kind = getattr(host, "kind", "")
    return kind == "openai_chat" or (kind == "python" and bool(getattr(getattr(host, "spec", None), "chat", False)))


def openai_messages(history: list[Turn]) -> list[ChatMessage]:
    """Sonar turns as OpenAI chat messages."""
    out: list[ChatMessage] = []
    for turn in history:
        if turn["role"] == "assistant" and turn.get("tool_calls"):
            out.append({"role": "assistant", "content": turn["content"] or None, "tool_calls": [
                {"id": call.get("id") or f"call_{i}", "type": "function",
                 "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False,
                                                                            sort_keys=True)}}
                for i, call in enumerate(turn["tool_calls"])]})
        elif turn["role"] == "tool":
            out.append({"role": "tool", "content": turn["content"], "tool_call_id": turn.get("tool_call_id", "")})
        else:
            out.append({"role": turn["role"], "content": turn["content"]})
    return out


def _calls(raw: Any) -> tuple[list[ToolCall], str | None]:
    """OpenAI ``tool_calls`` as Sonar calls; an error when they cannot be read."""
    calls: list[ToolCall] = []
    for call in raw or ():
        try:
            function = call["function"]
            arguments = function.get("arguments") or "{}"
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            if not isinstance(arguments, dict):
                raise TypeError("arguments")
            calls.append({"id": str(call.get("id") or f"call_{len(calls)}"), "name": str(function["name"]),
                          "arguments": arguments})
        except (KeyError, TypeError, ValueError):
            return [], f"unreadable tool call {str(call)[:200]}"
    return calls, None


def ask_turn(host: Host, history: list[Turn], tools: list[ToolDeclaration], tags: CallTags,
             repeat: int = 0) -> AssistantTurn:
    """The host's next assistant turn after ``history`` (never raises: a failure is in ``error``)."""
    messages = openai_messages(history)
    if tools:
        messages = [{"role": TOOLS_ROLE, "tools": tools}] + messages
    completion = host.client.complete_many([LLMRequest(messages, repeat=repeat,
                                                       tags={"model_key": host.key, **tags})])[0]
    if completion.error is not None:
        return AssistantTurn(error=completion.error, duration=completion.seconds)
    calls, error = _calls(completion.meta.get("tool_calls"))
    usage = completion.meta.get("usage") if isinstance(completion.meta.get("usage"), dict) else {}
    return AssistantTurn(content=completion.text or "", tool_calls=calls, error=error, cached=completion.cached,
                         duration=completion.seconds, input_tokens=usage.get("prompt_tokens"),
                         output_tokens=usage.get("completion_tokens"))
