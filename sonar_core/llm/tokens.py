"""Tokens and prices: what a call's usage says, how a prompt's tokens are estimated, and a tally.

Plain functions and data shared by :mod:`.ledger` (the run's accounting) and the hosts (a host's
answer carries its tokens and cost). docs/costs.md says it for users.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Sequence, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from ..jsontypes import JsonObject
from .requests import ChatMessage

__all__ = ["Price", "TokenTally", "usage_tokens", "estimate_text_tokens", "estimate_prompt_tokens", "CHARS_PER_TOKEN",
           "MESSAGE_TOKENS", "DEFAULT_OUTPUT_TOKENS"]

#: Characters per token of the estimate (OpenAI's rule of thumb for English text).
CHARS_PER_TOKEN = 4.0
#: Tokens a chat message costs besides its content (role and separators).
MESSAGE_TOKENS = 4
#: Output tokens of a free-text answer when nothing better is known.
DEFAULT_OUTPUT_TOKENS = 128


class Price(BaseModel):
    """USD per 1,000 input (prompt) and output (completion) tokens."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    input_per_1k: float = Field(default=0.0, ge=0)
    output_per_1k: float = Field(default=0.0, ge=0)

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        if input_tokens is None and output_tokens is None:
            return None
        return (input_tokens or 0) / 1000 * self.input_per_1k + (output_tokens or 0) / 1000 * self.output_per_1k


def usage_tokens(meta: JsonObject) -> tuple[int | None, int | None]:
    """(input, output) tokens an answer's metadata reports (its ``usage``, or the fields themselves)."""
    usage = meta.get("usage") if isinstance(meta.get("usage"), dict) else meta

    def number(*names: str) -> int | None:
        for name in names:
            value = usage.get(name)
            # A NaN or infinite count (a broken endpoint) is no count.
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return int(value)
        return None

    return number("prompt_tokens", "input_tokens"), number("completion_tokens", "output_tokens")


def estimate_text_tokens(text: str) -> int:
    """Tokens of ``text`` by the character rule (at least 1 for any text)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def estimate_prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    """Tokens of a chat prompt by the character rule: each message's content plus its overhead."""
    total = 0
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):  # a tool declaration (hosts/chat_turns.py), a tool call
            content = json.dumps({k: v for k, v in message.items() if k != "role"}, ensure_ascii=False, default=str)
        total += estimate_text_tokens(content) + MESSAGE_TOKENS
    return total


class TallyRecord(TypedDict):
    """A tally as run.json's ``costs`` shows it (``cost`` null when no call had a price)."""
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None


@dataclass
class TokenTally:
    """Calls, tokens and cost of one host, judge or evaluator."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    #: Whether any call had a price (else ``cost`` is reported as null).
    priced: bool = False

    def add(self, calls: int, input_tokens: int | None, output_tokens: int | None, cost: float | None) -> None:
        self.calls += calls
        self.input_tokens += input_tokens or 0
        self.output_tokens += output_tokens or 0
        if cost is not None:
            self.cost += cost
            self.priced = True

    def as_dict(self) -> "TallyRecord":
        return {"calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": round(self.cost, 6) if self.priced else None}

    @classmethod
    def of(cls, record: "TallyRecord") -> "TokenTally":
        """A tally from its run.json record (a resumed run adds to what the interrupted one spent)."""
        cost = record.get("cost")
        return cls(int(record.get("calls") or 0), int(record.get("input_tokens") or 0),
                   int(record.get("output_tokens") or 0), float(cost or 0.0), cost is not None)
