"""A scripted generator and quality judge for tests and benchmarks of ``sonar generate``.

:func:`reply` answers the prompts of :mod:`sonar_core.generation.prompts` and
:mod:`sonar_core.generation.quality_judges` as a well-behaved model would: an item's question is built
from its first passage's first sentence (in the prompt's language), its answer is that sentence, and it
cites the passages; a judge prompt gets ``<n>: yes`` for every item, except that an answerability
prompt gets ``no`` for a question holding :data:`UNANSWERED_MARK` (what the scripted generator writes for
an unanswerable item). :class:`Faulty` makes a share of the generation replies unreadable.
"""

from __future__ import annotations

import json
import re
import threading

__all__ = ["reply", "Faulty", "UNANSWERED_MARK", "item_fields"]

UNANSWERED_MARK = "loyalty bonus"
_CHUNK = re.compile(r"^\[\[chunk:(.+?)\]\]$", re.MULTILINE)


def item_fields(prompt: str) -> dict:
    """The type, language code and (chunk id, text) passages a generation prompt holds."""
    kind = re.search(r"^TYPE: (\S+)", prompt, re.MULTILINE).group(1)
    language = re.search(r"^LANGUAGE: .*\((\w+)\)", prompt, re.MULTILINE).group(1)
    body = prompt.split("PASSAGES:\n", 1)[1]
    ids = _CHUNK.findall(body)
    texts = [part.split("\n\n")[0].strip() for part in _CHUNK.split(body)[2::2]]
    return {"type": kind, "language": language, "passages": list(zip(ids, texts))}


def _sentence(text: str, variant: int = 0) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return sentences[variant % len(sentences)].rstrip(".!?")


def generation_reply(prompt: str) -> str:
    fields = item_fields(prompt)
    ids = [chunk_id for chunk_id, _ in fields["passages"]]
    variant = re.search(r"^VARIANT: (\d+)", prompt, re.MULTILINE)
    sentence = _sentence(fields["passages"][0][1], int(variant.group(1)) - 1 if variant else 0)
    german = fields["language"] == "de"
    if fields["type"] == "unanswerable":
        topic = " ".join(sentence.split()[:6])
        question = (f"Gibt es einen {UNANSWERED_MARK} zu: {topic}?" if german
                    else f"Is there a {UNANSWERED_MARK} for this: {topic}?")
        answer = "Die Dokumente sagen dazu nichts." if german else "The documents do not say."
    else:
        question = (f"Stimmt es, dass {sentence[0].lower() + sentence[1:]}?" if german
                    else f"Is it true that {sentence[0].lower() + sentence[1:]}?")
        answer = sentence + "."
    return json.dumps({"question": question, "answer": answer, "chunk_ids": ids}, ensure_ascii=False)


def judge_reply(prompt: str) -> str:
    items = re.findall(r"^ITEM (\d+)\nPASSAGES:\n(.*?)\nQUESTION: (.*?)\n", prompt, re.MULTILINE | re.DOTALL)
    answerability = "can the QUESTION be answered" in prompt
    return "\n".join(f"{n}: {'no' if answerability and UNANSWERED_MARK in q else 'yes'}" for n, _, q in items)


def reply(prompt: str) -> str:
    if "[[chunk:" in prompt and "TYPE:" in prompt:
        return generation_reply(prompt)
    if "For each item:" in prompt:
        return judge_reply(prompt)
    return "yes"


class Faulty:
    """``reply``, except that generation calls number ``k`` (from 1) with ``k % period`` in ``bad`` get an
    unreadable reply (30% by default: 3 of every 10)."""

    def __init__(self, period: int = 10, bad: tuple[int, ...] = (1, 4, 7)) -> None:
        self.period, self.bad = period, bad
        self.calls = 0
        self.unreadable = 0
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        if "[[chunk:" in prompt and "TYPE:" in prompt:
            with self._lock:
                self.calls += 1
                broken = self.calls % self.period in self.bad
                self.unreadable += broken
            if broken:
                return '{"question": "What is covered?", "answer": "Water dam'  # cut short: not JSON
        return reply(prompt)
