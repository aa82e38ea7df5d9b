"""The demo's agent conversations (``cases/agent.json``): Northwind Mutual's claims assistant with two
tools, ``lookup_policy`` and ``file_claim``, one conversation per model and case.

A case has ``key``, ``note``, ``expected_tool_calls``, ``expected_outcome``, ``user_turns`` and
``conversations``: per model, a list of steps. A step is ``{"say": text}`` (an assistant turn),
``{"user": n}`` (the case's user turn n; turn 0 opens every conversation), or ``{"call": name,
"arguments": {...}, "result": text}`` (an assistant turn calling the tool, then the tool's result).
The rows carry the conversation (the system turn first), the expected tool calls and outcome;
``input`` and ``actual_output`` are left to their defaults (the first user turn, the last assistant
turn), as a user's conversation dataset would leave them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .case_files import MODELS, CaseFileError

if TYPE_CHECKING:
    from ..conversation import Turn
    from ..jsontypes import JsonObject

__all__ = ["AGENT_FILE", "agent_rows", "conversation_of"]

AGENT_FILE = "agent.json"


def conversation_of(system: str, user_turns: list[str], steps: list[JsonObject], where: str) -> list[Turn]:
    """The turns of one model's conversation, from its steps."""
    turns: list[Turn] = [{"role": "system", "content": system}, {"role": "user", "content": user_turns[0]}]
    for number, step in enumerate(steps):
        if set(step) == {"say"}:
            turns.append({"role": "assistant", "content": step["say"]})
        elif set(step) == {"user"}:
            turns.append({"role": "user", "content": user_turns[step["user"]]})
        elif set(step) == {"call", "arguments", "result"}:
            call_id = f"call_{number}"
            turns.append({"role": "assistant", "content": "",
                          "tool_calls": [{"id": call_id, "name": step["call"], "arguments": step["arguments"]}]})
            turns.append({"role": "tool", "content": step["result"], "tool_call_id": call_id, "name": step["call"]})
        else:
            raise CaseFileError(f"{where}: unknown step {step!r}")
    return turns


def agent_rows(cases_dir: Path, timing: Callable[[str, str, str, list[str], str], tuple[float, float]]) -> list[dict]:
    """One row per agent case and model; ``timing(key, model, prompt, context, answer)`` gives the
    row's (duration, cost) as for every other demo row."""
    data = json.loads((cases_dir / AGENT_FILE).read_text(encoding="utf-8"))
    rows = []
    for case in data["cases"]:
        where = f"{AGENT_FILE} case {case['key']!r}"
        if set(case["conversations"]) != set(MODELS):
            raise CaseFileError(f"{where}: conversations must be given for exactly {', '.join(MODELS)}")
        for model in MODELS:
            turns = conversation_of(data["system"], case["user_turns"], case["conversations"][model], where)
            key = f"{case['key']}::{model}"
            said = " ".join(t["content"] for t in turns if t["role"] in ("user", "tool", "system"))
            answer = " ".join(t["content"] for t in turns if t["role"] == "assistant")
            duration, cost = timing(key, model, said, [], answer)
            rows.append({"key": key, "test_case_key": case["key"], "model_key": model, "actual_duration": duration,
                         "cost": cost, "categories": [data["category"]], "conversation": turns,
                         "expected_tool_calls": case["expected_tool_calls"],
                         "expected_outcome": case["expected_outcome"]})
    return rows
