"""Steps of a procedure in a text, found with regular expressions and heuristics (no LLM).

A text's steps are the first of these that finds at least two steps:

1. **list items**: lines starting with a number (``1.``, ``2)``, ``3:``, ``(4)``, ``Step 5:``), a
   letter (``a)``) or a bullet (``-``, ``*``, ``•``, ``–``); a line right below an item (no blank
   line between) continues it, and text before the first item or after a blank line is not a step;
2. **inline numbers**: ``1. ... 2. ... 3. ...`` inside running text, numbered 1, 2, 3, ... in
   order (other numbers are left alone); the last step ends with its first sentence;
3. **sequence words**: sentences starting with First, Second, Third, Next, Then, After that,
   Afterwards, Subsequently, Finally, Lastly, To begin, Start by, ...; the steps run from the first
   such sentence to the last, sentences between them included.

Markers and sequence words are removed from the steps, so two steps compare by what they say.
When none of the three applies, the caller may fall back to every sentence as a step.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from .sentences import has_words

__all__ = ["structured_steps", "list_items", "inline_numbered_steps", "sequence_word_steps", "text_steps",
           "context_steps"]

_EMPHASIS = r"(?:\*\*|__)?"
# 1.  2)  3:  Step 4:  (5)  a)  and bullets, optionally in bold, then the item's text.
_MARKER = r"(?:(?:step\s+)?\d{1,3}\s*[.):]|\(\d{1,3}\)|[a-z]\)|[-*•‣◦▪–])"
_LIST_ITEM = re.compile(r"^\s*" + _EMPHASIS + _MARKER + _EMPHASIS + r"\s+(?=\S)", re.IGNORECASE)
_INLINE_NUMBER = re.compile(r"(?:(?<=\s)|^)(?:step\s+)?(\d{1,2})[.):]\s+(?=\S)", re.IGNORECASE)
_SEQUENCE_WORD = re.compile(
    r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth(?:ly)?|next|then|after\s+(?:that|this)|"
    r"afterwards?|subsequently|finally|lastly|to\s+(?:begin|start)|begin\s+by|start\s+by)\b[,:]?\s*",
    re.IGNORECASE,
)
MIN_STEPS = 2

SplitSentences = Callable[[str], Sequence[str]]


def _clean(steps: list[str]) -> list[str]:
    return [step for step in (" ".join(s.split()) for s in steps) if has_words(step)]


def list_items(text: str) -> list[str]:
    """Items of the line lists in ``text`` (method 1), markers removed."""
    items: list[str] = []
    open_item = False
    for line in text.splitlines():
        if not line.strip():
            open_item = False
            continue
        marker = _LIST_ITEM.match(line)
        if marker:
            items.append(line[marker.end():])
            open_item = True
        elif open_item:
            items[-1] += " " + line
    return _clean(items)


def inline_numbered_steps(text: str, split_sentences: SplitSentences) -> list[str]:
    """Steps numbered 1, 2, 3, ... inside running text (method 2), numbers removed."""
    kept = []
    for match in _INLINE_NUMBER.finditer(text):
        if int(match.group(1)) == len(kept) + 1:
            kept.append(match)
    if len(kept) < MIN_STEPS:
        return []
    steps = [text[a.end():b.start()] for a, b in zip(kept, kept[1:])]
    last = split_sentences(text[kept[-1].end():])
    return _clean(steps + list(last[:1]))


def sequence_word_steps(sentences: Sequence[str]) -> list[str]:
    """Sentences from the first to the last one opening with a sequence word (method 3), words removed."""
    marked = [i for i, sentence in enumerate(sentences) if _SEQUENCE_WORD.match(sentence)]
    if len(marked) < MIN_STEPS:
        return []
    return _clean([_SEQUENCE_WORD.sub("", s, count=1) for s in sentences[marked[0]:marked[-1] + 1]])


def structured_steps(text: str, split_sentences: SplitSentences) -> tuple[list[str], str]:
    """(steps, method) by the first method that finds at least two steps; ([], "") when none does."""
    for method, find in (("list", lambda: list_items(text)),
                         ("inline", lambda: inline_numbered_steps(text, split_sentences)),
                         ("sequence", lambda: sequence_word_steps(split_sentences(text)))):
        steps = find()
        if len(steps) >= MIN_STEPS:
            return steps, method
    return [], ""


def text_steps(text: str, split_sentences: SplitSentences, sentence_fallback: bool = True) -> tuple[list[str], str]:
    """(steps, method) of one text (an answer): its enumeration, else its sentences when allowed."""
    steps, method = structured_steps(text, split_sentences)
    if steps or not sentence_fallback:
        return steps, method or "none"
    return _clean(list(split_sentences(text))), "sentences"


def context_steps(chunks: Sequence[str], split_sentences: SplitSentences,
                  sentence_fallback: bool = True) -> tuple[list[str], str]:
    """(steps, method) of the retrieved context, chunk after chunk.

    Only chunks holding an enumeration give steps when any chunk holds one (the others are
    background); when none does, every sentence of every chunk is a step (if allowed).
    """
    found = [structured_steps(chunk, split_sentences) for chunk in chunks]
    if any(steps for steps, _ in found):
        methods = sorted({method for steps, method in found if steps})
        return [step for steps, _ in found for step in steps], "+".join(methods)
    if not sentence_fallback:
        return [], "none"
    return _clean([s for chunk in chunks for s in split_sentences(chunk)]), "sentences"
