"""A bundled offline agent for the conversation demo: Northwind Mutual's claims assistant as a Python
function with two tools, ``lookup_policy(policy_id)`` and ``file_claim(policy_id, kind, amount)``.

Use it as a ``python`` host with ``chat: true`` (``callable: "sonar_core.demo.claims_agent:respond"``,
configs/agent_demo.yaml). It reads the conversation as OpenAI messages and, by plain rules, looks the
policy up once the user gives its number, files a claim when the user asks for one, and answers from the
tools' results. Its planted weakness: it files the amount of the first number the user wrote, so a
user who gives the policy number's digits before the amount gets a wrong claim, which tool_call_accuracy
catches.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..conversation import ToolDeclaration
    from ..hosts.python_callable import AgentReply
    from ..jsontypes import JsonObject
    from ..llm.requests import ChatMessage

__all__ = ["respond"]

_POLICY = re.compile(r"\bNW-\d+\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
#: Claim kind -> words of the user's that name it.
_KINDS = {"theft": ("theft", "stolen", "stole"), "water": ("water", "leak", "flood"), "fire": ("fire",),
          "hail": ("hail",)}


def _calls(messages: list[ChatMessage], name: str) -> list[JsonObject]:
    return [json.loads(c["function"]["arguments"]) for m in messages if m.get("role") == "assistant"
            for c in m.get("tool_calls") or () if c["function"]["name"] == name]


def _file(said: str, policy: str) -> AgentReply:
    lowered = said.lower()
    kind = next((k for k, words in _KINDS.items() if any(w in lowered for w in words)), "other")
    # The first number the user wrote, policy digits included: the planted weakness.
    numbers = [int(n) if n.isdigit() else float(n) for n in _NUMBER.findall(said)]
    return {"answer": "", "tool_calls": [{"name": "file_claim", "arguments": {
        "policy_id": policy, "kind": kind, "amount": numbers[0] if numbers else 0}}]}


def respond(messages: list[ChatMessage], tools: list[ToolDeclaration]) -> AgentReply:
    """The agent's next turn: ``{"answer": text}``, or a tool call with ``tool_calls``."""
    users = [m["content"] for m in messages if m.get("role") == "user"]
    said = " ".join(users)
    policy = next(iter(_POLICY.findall(said)), None)
    last = messages[-1]
    wants_claim = re.search(r"\b(file|claim it|make a claim)\b", said, re.IGNORECASE) is not None
    if last.get("role") == "tool":
        result = last["content"]
        if _calls(messages, "file_claim") and "filed" in result.lower():
            return {"answer": f"Done: {result}"}
        if wants_claim and not _calls(messages, "file_claim") and "covered" in result.lower():
            return _file(said, policy)
        return {"answer": f"According to policy {policy}: {result}"}
    if policy is None:
        return {"answer": "Could you give me your policy number (it starts with NW-)?"}
    if not any(call.get("policy_id") == policy for call in _calls(messages, "lookup_policy")):
        return {"answer": "", "tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": policy}}]}
    if wants_claim and not _calls(messages, "file_claim"):
        return _file(said, policy)
    return {"answer": "Is there anything else I can help you with?"}
