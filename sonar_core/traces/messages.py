"""Pieces both conventions share: attribute type checks, roles, tool-call arguments, JSON-wrapped texts.

Turns are made in the shape of a Sonar conversation (docs/conversations.md): ``{"role", "content"}``,
an assistant turn with ``tool_calls: [{"name", "arguments", "id"?}]``, a tool turn with
``tool_call_id`` and ``name``.
"""

from __future__ import annotations

import json
from typing import Any

from .spans import SpanSkip

__all__ = ["ROLES", "first_text", "text_attr", "int_attr", "number_attr", "role_of", "arguments_of", "as_text",
           "unwrap", "last_user_text", "reply_text", "structured"]

#: Roles other systems use, as a conversation's four.
ROLES = {"user": "user", "human": "user", "system": "system", "developer": "system", "assistant": "assistant",
          "ai": "assistant", "model": "assistant", "bot": "assistant", "tool": "tool", "function": "tool",
          "ipython": "tool"}
#: Keys under which a JSON-wrapped input or output holds its one text (LangChain, LlamaIndex, agents).
_INPUT_KEYS = ("input", "query", "question", "user_input", "message", "prompt", "text", "content")
_OUTPUT_KEYS = ("output", "answer", "response", "result", "final_output", "text", "content")


def _type(value: Any) -> str:
    return {str: "string", bool: "bool", int: "int", float: "double", list: "array", dict: "kvlist"}.get(
        type(value), type(value).__name__)


def text_attr(attrs: dict[str, Any], key: str) -> str:
    """A text attribute ("" when absent); any other type skips the span."""
    value = attrs.get(key)
    if value is None:
        return ""
    if type(value) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{key}' must be a string, got {_type(value)}")
    return value


def first_text(attrs: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The first of ``keys`` holding a non-empty text ("" when none does); an attribute of another type met on
    the way skips the span (as ``text_attr(a) or text_attr(b) or ...`` would)."""
    for key in keys:
        value = attrs.get(key)
        if value is None:
            continue
        if type(value) is not str:
            text_attr(attrs, key)  # raises
        if value:
            return value
    return ""


def int_attr(attrs: dict[str, Any], key: str) -> int | None:
    """A count (None when absent); a whole double is taken, anything else skips the span."""
    value = attrs.get(key)
    if value is None:
        return None
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value.is_integer() and value >= 0:
        return int(value)
    raise SpanSkip("wrong attribute type", f"attribute '{key}' must be a count (int), got {_type(value)} {value!r:.40}")


def number_attr(attrs: dict[str, Any], key: str) -> float | None:
    """A non-negative finite number (None when absent)."""
    value = attrs.get(key)
    if value is None:
        return None
    if type(value) in (int, float) and 0 <= value < float("inf"):
        return float(value)
    raise SpanSkip("wrong attribute type", f"attribute '{key}' must be a number, got {_type(value)} {value!r:.40}")


def role_of(value: Any, key: str) -> str:
    """A message's role as one of system, user, assistant, tool."""
    if type(value) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{key}' must be a string, got {_type(value)}")
    role = ROLES.get(value.strip().lower())
    if role is None:
        raise SpanSkip("unknown message role", f"attribute '{key}' is {value[:40]!r}")
    return role


def arguments_of(value: Any) -> dict[str, Any]:
    """Tool-call arguments as an object: a JSON object's text parsed; any other value (or text that is not
    a JSON object) wrapped as ``{"input": value}``."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return {}
        try:
            parsed = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError):
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {} if value is None else {"input": value}


def as_text(value: Any) -> str:
    """A tool result or message part as text: a string as it is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def structured(value: Any, key: str) -> Any:
    """An attribute recorded either structured (array/kvlist) or as JSON text, as Python values."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            raise SpanSkip("wrong attribute type", f"attribute '{key}' is neither structured nor JSON text") from None
    return value


def unwrap(text: str, output: bool = False) -> str:
    """The one text inside a JSON-wrapped input or output (``{"input": "..."}``, ``{"messages": [...]}``);
    any other text as it is."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return text
    if not isinstance(value, dict):
        return text
    for key in _OUTPUT_KEYS if output else _INPUT_KEYS:
        found = value.get(key)
        if isinstance(found, str):
            return found
    messages = value.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                role = str(message.get("role") or message.get("type") or "").lower()
                if (role in ("assistant", "ai") if output else role in ("user", "human")):
                    return message["content"]
    return text


def last_user_text(turns: tuple | list) -> str:
    """The last user turn's content ("" when there is none)."""
    for turn in reversed(turns):
        if turn["role"] == "user":
            return turn["content"]
    return ""


def reply_text(turns: tuple | list) -> str:
    """The reply's text: its first assistant turn's content, else the tools it calls written as
    ``name({arguments})`` (a reply that only calls tools must not read as an earlier answer)."""
    for turn in turns:
        if turn["role"] == "assistant":
            if turn["content"] or not turn.get("tool_calls"):
                return turn["content"]
            return "; ".join(f"{call['name']}({as_text(call['arguments'])})" for call in turn["tool_calls"])
    return ""
