"""LLM step extraction for Step Alignment and Completeness (``step_extraction: judge``).

The catalogue's evaluator "uses LLM and/or regular expressions to extract steps". With
``step_extraction: judge`` the run's judge (or ``custom_eval_judge_config_key``) is asked, once per
distinct text, to list the steps of the procedure the text describes, one numbered line each, in the
text's own words; Sonar reads the numbered lines back with the same list reader the heuristic uses
(:func:`.steps.list_items`). ``none`` means the text describes no procedure (no steps). An answer with
neither, or a call that failed after its retries, leaves that text to the heuristic, and the row's
details say so. Every answer goes through the core's LLM client: cached, paced and retried.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from .steps import _clean, list_items

__all__ = ["EXTRACTION_PROMPT", "extraction_messages", "read_extracted_steps", "extract_with_judge"]

EXTRACTION_PROMPT = """\
You are extracting the steps of a procedure (a sequence of actions, or the stages of a process) from a \
text. Here is the text:
[BEGIN TEXT]
{text}
[END TEXT]

List every step the text describes, in the text's order and in its own words, one step per line, each \
line starting with its number: "1. ", "2. ", "3. " and so on. Leave out text that is no step (background, \
conditions, remarks). If the text describes no procedure, respond with the single word "none"."""

#: Most tokens an extraction answer may take (a long procedure's steps).
EXTRACTION_MAX_TOKENS = 512
_NONE = re.compile(r"^\W*none\W*$", re.IGNORECASE)


def extraction_messages(text: str) -> list[dict[str, str]]:
    """The chat messages asking for the steps of ``text`` (inserted as it is: never scanned again)."""
    before, after = EXTRACTION_PROMPT.split("{text}", 1)
    return [{"role": "user", "content": before + text + after}]


def read_extracted_steps(answer: str | None) -> list[str] | None:
    """The steps a judge listed (numbered lines, markers removed); [] for "none"; None when the answer
    holds neither (or there is no answer)."""
    if answer is None:
        return None
    if _NONE.match(answer.strip()):
        return []
    steps = _clean(list_items(answer))
    return steps or None


def extract_with_judge(texts: Sequence[str], client, tags: Callable[[str], dict]) -> dict[str, list[str] | None]:
    """Each distinct text -> the steps the judge listed (None: unreadable or failed), asked in one batch."""
    from sonar_core import LLMRequest

    distinct = list(dict.fromkeys(texts))
    requests = [LLMRequest(extraction_messages(text), max_tokens=EXTRACTION_MAX_TOKENS, tags=tags(text))
                for text in distinct]
    completions = client.complete_many(requests) if requests else []
    return {text: read_extracted_steps(c.text if c.ok else None) for text, c in zip(distinct, completions)}
