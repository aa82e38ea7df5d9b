"""Conversations on a row: the turns, the tool calls in them, and their validation.

A ground module beside :mod:`.dataset`: a dataset row or test case may carry ``conversation`` (a
list of turns), ``expected_tool_calls`` (the reference calls, in order) and ``expected_outcome``
(what the conversation should achieve, in words). This module checks the first two and normalises
them to plain dicts, so every later reader (evaluators, the host pipeline, the case pages) can
trust their shape:

* a turn is ``{"role": "system"|"user"|"assistant"|"tool", "content": str}``; an assistant turn may
  carry ``"tool_calls": [{"name": str, "arguments": {...}}, ...]`` (its ``content`` may then be
  empty or absent), a tool turn may carry ``"tool_call_id": str`` and ``"name": str``;
* a tool call is ``{"name": str, "arguments": {...}}`` (an ``"id"`` string is kept when given).

In a CSV both fields are JSON cells. A malformed value raises :class:`~sonar_core.errors.DatasetError`
with one line naming the file and row (``where``), the field, the turn index (from 0, as in the
JSON list) and what is wrong.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, TypedDict

from .errors import DatasetError
from .jsontypes import JsonObject

__all__ = ["Role", "ToolCall", "Turn", "ToolDeclaration", "ToolResult", "SimulatedUser", "ConversationFields", "ROLES",
           "CONVERSATION_FIELDS", "STRUCTURED_FIELDS", "parse_conversation", "parse_tool_calls", "parse_field",
           "first_user_content", "last_assistant_content", "conversation_defaults", "called_tools", "assistant_turns",
           "transcript_text"]

#: The roles a turn may have.
ROLES = ("system", "user", "assistant", "tool")
Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(TypedDict):
    """A tool call: the tool's name and its arguments (an ``id`` string is kept when given)."""
    name: str
    arguments: JsonObject
    id: NotRequired[str]


class Turn(TypedDict):
    """One turn of a conversation (also a chat message sent to a host or judge)."""
    role: Role
    content: str
    tool_calls: NotRequired[list[ToolCall]]  #: an assistant turn's calls
    tool_call_id: NotRequired[str]  #: a tool turn's: the call it answers
    name: NotRequired[str]  #: a tool turn's: the tool


class ToolDeclaration(TypedDict):
    """An OpenAI tool declaration, ``{"type": "function", "function": {"name": ..., "parameters": {...}}}``."""
    type: NotRequired[str]
    function: JsonObject


class ToolResult(TypedDict):
    """An entry of a test case's ``tool_results``: what a call of ``name`` returns (for every call of the
    tool when ``arguments`` is absent)."""
    name: str
    result: str
    arguments: NotRequired[JsonObject]


class ConversationFields(TypedDict, total=False):
    """The fields of a row under construction that :func:`conversation_defaults` reads and fills."""
    conversation: list[Turn]
    input: str
    actual_output: str


class SimulatedUser(TypedDict, total=False):
    """A test case's ``simulated_user``: a judge plays the user turns (empty when the case has none)."""
    judge: str | None
    scenario: str
    stop_when: str
    max_user_turns: int
#: Row fields this module validates (``expected_outcome`` is a plain string). The last four belong
#: to a test case asked of a host (execution/conversations.py).
CONVERSATION_FIELDS = ("conversation", "expected_tool_calls", "tools", "tool_results", "max_turns", "simulated_user")
#: Every field :func:`parse_field` checks: the conversation's, and a red-team row's ``attack`` (an object).
STRUCTURED_FIELDS = CONVERSATION_FIELDS + ("attack",)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _decode(value: Any, where: str, name: str) -> Any:
    """A CSV cell's JSON text as its value; other values as they are."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}, field '{name}': not valid JSON ({exc.msg} at column {exc.colno})") from None
    return value


def _tool_call(call: Any, prefix: str) -> ToolCall:
    """One tool call, checked; ``prefix`` names where it sits for the message."""
    if not isinstance(call, dict):
        raise DatasetError(f"{prefix}: expected an object with 'name' and 'arguments', got {_type(call)}")
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise DatasetError(f"{prefix}: 'name' must be a non-empty string, got {_type(name)}")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, dict):
        raise DatasetError(f"{prefix}: 'arguments' must be an object, got {_type(arguments)}")
    out: ToolCall = {"name": name, "arguments": arguments}
    if isinstance(call.get("id"), str):
        out["id"] = call["id"]
    return out


_CALL_KEYS = frozenset({"name", "arguments"})
_TURN_KEYS = frozenset({"role", "content"})
_TOOL_TURN_KEYS = frozenset({"role", "content", "tool_call_id", "name"})
_SIMPLE_ROLES = frozenset({"system", "user", "assistant"})


def _valid_call(call: Any) -> bool:
    """A call already in the normal shape (kept as it is: no copy for the common case)."""
    return (type(call) is dict and call.keys() == _CALL_KEYS and type(call["name"]) is str and call["name"]
            and type(call["arguments"]) is dict)


def _valid_turn(turn: Any) -> bool:
    """A turn already in the normal shape, checked without building any message."""
    if type(turn) is not dict or type(turn.get("content")) is not str:
        return False
    keys = turn.keys()
    role = turn.get("role")
    if role in _SIMPLE_ROLES and keys == _TURN_KEYS:
        return True
    if role == "assistant" and len(keys) == 3 and "tool_calls" in turn:
        calls = turn["tool_calls"]
        return type(calls) is list and bool(calls) and all(map(_valid_call, calls))
    if role == "tool" and keys <= _TOOL_TURN_KEYS:
        return all(type(turn[k]) is str for k in ("tool_call_id", "name") if k in turn)
    return False


_ROLE_SET = frozenset(ROLES)


def _all_valid(turns: list[Any]) -> bool:
    """Whether every turn is already in the normal shape; a plain ``{"role", "content"}`` turn (most
    of them) is checked inline, the others by :func:`_valid_turn`."""
    roles, valid = _ROLE_SET, _valid_turn
    for turn in turns:
        if type(turn) is dict and len(turn) == 2 and type(turn.get("content")) is str and turn.get("role") in roles:
            continue
        if not valid(turn):
            return False
    return True


def parse_tool_calls(value: Any, where: str, name: str = "expected_tool_calls") -> list[ToolCall]:
    """``expected_tool_calls`` checked and normalised; errors name the call index (from 0)."""
    value = _decode(value, where, name)
    if not isinstance(value, list):
        raise DatasetError(f"{where}, field '{name}': expected a list of tool calls, got {_type(value)}")
    if all(map(_valid_call, value)):
        return value
    return [_tool_call(call, f"{where}, field '{name}', call {i}") for i, call in enumerate(value)]


def _turn(turn: Any, prefix: str) -> Turn:
    if not isinstance(turn, dict):
        raise DatasetError(f"{prefix}: expected an object with 'role' and 'content', got {_type(turn)}")
    role = turn.get("role")
    if role not in ROLES:
        what = "missing 'role'" if role is None else f"unknown role {role!r}"
        raise DatasetError(f"{prefix}: {what} (expected system, user, assistant or tool)")
    calls = turn.get("tool_calls")
    if calls is not None and role != "assistant":
        raise DatasetError(f"{prefix}: a {role} turn cannot carry 'tool_calls' (only an assistant turn can)")
    if calls is not None and not isinstance(calls, list):
        raise DatasetError(f"{prefix}: 'tool_calls' must be a list of objects, got {_type(calls)}")
    content = turn.get("content")
    if content is None and calls:
        content = ""  # an assistant turn that only calls tools (OpenAI writes null)
    if not isinstance(content, str):
        what = "missing 'content'" if "content" not in turn else f"'content' must be a string, got {_type(content)}"
        raise DatasetError(f"{prefix}: {what}")
    out: Turn = {"role": role, "content": content}
    if calls:
        out["tool_calls"] = [_tool_call(call, f"{prefix}, tool call {j}") for j, call in enumerate(calls)]
    for key in ("tool_call_id", "name"):
        if key in turn and role == "tool":
            if not isinstance(turn[key], str):
                raise DatasetError(f"{prefix}: '{key}' must be a string, got {_type(turn[key])}")
            out[key] = turn[key]
    return out


def parse_conversation(value: Any, where: str, name: str = "conversation") -> list[Turn]:
    """``conversation`` checked and normalised (see the module docstring for the shape)."""
    value = _decode(value, where, name)
    if not isinstance(value, list):
        raise DatasetError(f"{where}, field '{name}': expected a list of turns, got {_type(value)}")
    if _all_valid(value):
        return value  # the common case: nothing to normalise, no message to build
    return [turn if _valid_turn(turn) else _turn(turn, f"{where}, field '{name}', turn {i}")
            for i, turn in enumerate(value)]


def _tools(value: Any, where: str) -> list[ToolDeclaration]:
    """``tools``: OpenAI tool declarations (``{"type": "function", "function": {"name": ...}}``)."""
    value = _decode(value, where, "tools")
    if not isinstance(value, list):
        raise DatasetError(f"{where}, field 'tools': expected a list of tool declarations, got {_type(value)}")
    for i, tool in enumerate(value):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise DatasetError(f"{where}, field 'tools', tool {i}: expected {{\"type\": \"function\", "
                               f"\"function\": {{\"name\": ..., \"parameters\": {{...}}}}}}")
    return value


def _tool_results(value: Any, where: str) -> list[ToolResult]:
    """``tool_results``: the table a tool call is answered from, ``[{"name", "arguments", "result"}]``
    (an entry without ``arguments`` answers every call of that tool)."""
    value = _decode(value, where, "tool_results")
    if not isinstance(value, list):
        raise DatasetError(f"{where}, field 'tool_results': expected a list of results, got {_type(value)}")
    for i, entry in enumerate(value):
        prefix = f"{where}, field 'tool_results', entry {i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise DatasetError(f"{prefix}: expected an object with a string 'name' and 'result'")
        if not isinstance(entry.get("result"), str):
            raise DatasetError(f"{prefix}: 'result' must be a string, got {_type(entry.get('result'))}")
        if "arguments" in entry and not isinstance(entry["arguments"], dict):
            raise DatasetError(f"{prefix}: 'arguments' must be an object, got {_type(entry['arguments'])}")
    return value


def _max_turns(value: Any, where: str) -> int | None:
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return None
        value = int(value) if value.isdigit() else value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DatasetError(f"{where}, field 'max_turns': expected a whole number of at least 1, got {value!r}")
    return value


def _simulated_user(value: Any, where: str) -> SimulatedUser:
    """``simulated_user``: ``{"judge": KEY, "scenario": text, "stop_when": text}`` (``max_user_turns``
    optional); a judge plays the user turns."""
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return {}
        value = _decode(value, where, "simulated_user")
    if not isinstance(value, dict):
        raise DatasetError(f"{where}, field 'simulated_user': expected an object, got {_type(value)}")
    for key in ("scenario", "stop_when"):
        if not isinstance(value.get(key), str) or not value[key].strip():
            raise DatasetError(f"{where}, field 'simulated_user': '{key}' must be a non-empty string")
    if value.get("judge") is not None and not isinstance(value["judge"], str):
        raise DatasetError(f"{where}, field 'simulated_user': 'judge' must be an LLM configuration key")
    turns = value.get("max_user_turns", 3)
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise DatasetError(f"{where}, field 'simulated_user': 'max_user_turns' must be a whole number of at least 1")
    unknown = sorted(set(value) - {"judge", "scenario", "stop_when", "max_user_turns"})
    if unknown:
        raise DatasetError(f"{where}, field 'simulated_user': unknown key '{unknown[0]}'")
    return value


def _object(value: Any, where: str, name: str) -> JsonObject:
    """An object field (``attack``: a red-team row's provenance, docs/redteam.md); a CSV cell holds JSON text."""
    value = {} if isinstance(value, str) and not value.strip() else _decode(value, where, name)
    if not isinstance(value, dict):
        raise DatasetError(f"{where}, field '{name}': expected an object, got {_type(value)}")
    return value


def parse_field(name: str, value: Any, where: str) -> Any:
    """One of :data:`STRUCTURED_FIELDS`, checked."""
    if name == "attack":
        return _object(value, where, name)
    if name == "conversation":
        return parse_conversation(value, where)
    if name == "tools":
        return _tools(value, where)
    if name == "tool_results":
        return _tool_results(value, where)
    if name == "max_turns":
        return _max_turns(value, where)
    if name == "simulated_user":
        return _simulated_user(value, where)
    return parse_tool_calls(value, where, name)


def first_user_content(conversation: list[Turn]) -> str | None:
    """The first user turn's content (a conversation row's default ``input``), or None."""
    return next((turn["content"] for turn in conversation if turn["role"] == "user"), None)


def last_assistant_content(conversation: list[Turn]) -> str | None:
    """The last assistant turn's content (a conversation row's default ``actual_output``), or None.

    An assistant turn that only calls tools (empty content) is passed over: the answer is the
    last thing the assistant said.
    """
    for turn in reversed(conversation):
        if turn["role"] == "assistant" and (turn["content"] or not turn.get("tool_calls")):
            return turn["content"]
    return None


def called_tools(conversation: list[Turn]) -> list[ToolCall]:
    """Every tool call of the conversation's assistant turns, in order."""
    return [call for turn in conversation if turn["role"] == "assistant" for call in turn.get("tool_calls", ())]


def assistant_turns(conversation: list[Turn]) -> list[tuple[int, str, str]]:
    """``(turn index, question, answer)`` for each assistant turn that says something, the question
    being the content of the user turn before it (per-turn scoring); turns with no user turn before
    them are left out."""
    out, question = [], None
    for index, turn in enumerate(conversation):
        if turn["role"] == "user":
            question = turn["content"]
        elif turn["role"] == "assistant" and turn["content"] and question is not None:
            out.append((index, question, turn["content"]))
    return out


def transcript_text(conversation: list[Turn]) -> str:
    """A conversation as plain text for a judge's prompt: one block per turn, ``[turn i] role: content``,
    an assistant turn's tool calls as ``calls name({json arguments})``, a tool turn naming its tool."""
    lines = []
    for index, turn in enumerate(conversation):
        role = turn["role"]
        if role == "tool" and turn.get("name"):
            role = f"tool {turn['name']}"
        parts = [turn["content"]] if turn["content"] else []
        parts += [f"calls {c['name']}({json.dumps(c['arguments'], ensure_ascii=False, sort_keys=True)})"
                  for c in turn.get("tool_calls", ())]
        lines.append(f"[turn {index}] {role}: " + " ".join(parts))
    return "\n".join(lines)


def conversation_defaults(values: ConversationFields) -> None:
    """A conversation row's ``input`` and ``actual_output`` default to its first user turn and last
    assistant turn, so every single-turn evaluator scores the final answer."""
    conversation = values["conversation"]
    if not values.get("input"):
        first = first_user_content(conversation)
        if first is not None:
            values["input"] = first
    if not values.get("actual_output"):
        last = last_assistant_content(conversation)
        if last is not None:
            values["actual_output"] = last
