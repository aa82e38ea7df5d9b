"""Reading the generator's reply into an item: a JSON object, repaired where that is safe.

:func:`parse_reply` accepts ``{"question", "answer", "chunk_ids"}`` (also inside a code fence or
after some chatter), and repairs what is plainly meant: typographic quotes, trailing commas,
``Question: ... Answer: ...`` lines instead of JSON, chunk ids missing (the item's own passages
are taken) or partly unknown (the unknown ones are left out). What cannot be read raises
:class:`ReplyError` with a one-line reason, and the item is asked again.
"""

from __future__ import annotations

import json
import re
from typing import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = ["GeneratedReply", "ReplyError", "parse_reply"]

#: Longest question or answer kept (characters): a runaway reply is not an item.
MAX_TEXT = 4000


class ReplyError(ValueError):
    """A reply that is not an item; the message says why (one line)."""


class GeneratedReply(BaseModel):
    """One item as the generator wrote it."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1, max_length=MAX_TEXT)
    answer: str = Field(min_length=1, max_length=MAX_TEXT)
    chunk_ids: list[str] = Field(default_factory=list)

    @field_validator("question", "answer", mode="before")
    @classmethod
    def _text(cls, value):
        if not isinstance(value, str):
            raise ValueError("expected text")
        return value.strip()

    @field_validator("chunk_ids", mode="before")
    @classmethod
    def _ids(cls, value):
        if value is None:
            return []
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
        raise ValueError("expected a list of chunk ids")


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_LABELLED = re.compile(r"^\s*\**\s*(question|frage|answer|antwort)\s*\**\s*[:：]\s*(.*)$", re.IGNORECASE)


def _json_candidates(text: str) -> list[str]:
    found = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        found.append(text[start:end + 1])
    return found


def _repair(candidate: str) -> str:
    fixed = candidate.replace("\u201c", '"').replace("\u201d", '"').replace("\u201e", '"')
    return re.sub(r",\s*([}\]])", r"\1", fixed)


def _labelled(text: str) -> dict | None:
    """``Question: ...`` / ``Answer: ...`` lines (the first of each), the answer running to the next label."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _LABELLED.match(line)
        if match:
            name = "question" if match.group(1).lower() in ("question", "frage") else "answer"
            if name in found:
                if current == "answer" or name == "question":
                    break
            current = name
            found.setdefault(name, []).append(match.group(2))
        elif current is not None and line.strip():
            found[current].append(line.strip())
        elif current == "answer" and not line.strip() and found.get("answer", [""])[0]:
            current = None
    if "question" in found and "answer" in found:
        return {"question": " ".join(found["question"]).strip(), "answer": " ".join(found["answer"]).strip()}
    return None


def parse_reply(text: str | None, offered: Sequence[str]) -> tuple[GeneratedReply, list[str]]:
    """The item in ``text`` and the repairs made (``[]`` when none); ``offered``: the item's chunk ids."""
    if not text or not text.strip():
        raise ReplyError("the reply is empty")
    repairs: list[str] = []
    data = None
    for candidate in _json_candidates(text):
        for attempt, source in enumerate((candidate, _repair(candidate))):
            try:
                loaded = json.loads(source)
            except (ValueError, RecursionError):
                continue
            if isinstance(loaded, dict):
                data = loaded
                if attempt:
                    repairs.append("json")
                break
        if data is not None:
            break
    if data is None:
        data = _labelled(text)
        if data is None:
            raise ReplyError("no JSON object with 'question' and 'answer' in the reply")
        repairs.append("labelled lines instead of JSON")
    try:
        reply = GeneratedReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ReplyError(f"field '{field}': {first['msg']}") from None
    known = [i for i in reply.chunk_ids if i in offered]
    if not reply.chunk_ids:
        repairs.append("chunk_ids missing: the item's passages")
        known = list(offered)
    elif not known:
        repairs.append("chunk_ids unknown: the item's passages")
        known = list(offered)
    elif len(known) < len(reply.chunk_ids):
        repairs.append("unknown chunk_ids left out")
    reply.chunk_ids = list(dict.fromkeys(known))
    return reply, repairs
