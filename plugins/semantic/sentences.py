"""Sentences of a text for the semantic evaluators: the run's Punkt splitter plus two fallbacks.

Punkt (``ctx.split_sentences``) only ends a sentence at punctuation, so a list or a text
without punctuation comes back as one long "sentence". Two documented fallbacks, both
parameters of the evaluators that split:

* ``split_on_newlines`` (default on): a line break also ends a sentence, so each list item and
  each unpunctuated line is a sentence of its own (a sentence hard-wrapped over two lines
  becomes two);
* ``max_sentence_words`` (default 64, 0 = off): a sentence longer than this many
  whitespace-separated words (a run-on text with no punctuation at all) is cut into pieces of
  at most that many words, so no part of it is lost to the model's input length limit.

Pieces without a letter or digit ("...", "-", an emoji) are dropped: they carry nothing to
compare and would only pull a minimum down.

:func:`cached_split` keeps the sentences of recent texts for the process, so the semantic
evaluators of a run (five of them split the same answers and contexts) split each text once.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Callable

from sonar_core import Param

__all__ = ["split_text", "cached_split", "has_words", "SENTENCE_LEVEL", "SPLIT_ON_NEWLINES", "MAX_SENTENCE_WORDS",
           "SENTENCE_PARAMETERS"]

_WORD = re.compile(r"\w")
#: H2O Sonar's tokenization label of sentence-level metrics in ``actual_output_meta``.
SENTENCE_LEVEL = "sentence_level_punkt"

SPLIT_ON_NEWLINES = Param(
    "split_on_newlines",
    bool,
    True,
    "A line break also ends a sentence (Punkt alone ends sentences only at punctuation), so list items "
    "and unpunctuated lines are sentences of their own.",
)
MAX_SENTENCE_WORDS = Param(
    "max_sentence_words",
    int,
    64,
    "A sentence longer than this many words (text without punctuation) is cut into pieces of at most "
    "this many words; 0 keeps every sentence whole.",
    min=0,
)
SENTENCE_PARAMETERS = (SPLIT_ON_NEWLINES, MAX_SENTENCE_WORDS)


def has_words(text: str) -> bool:
    """Whether ``text`` holds a letter or digit (something an embedding can carry)."""
    return bool(_WORD.search(text))


def split_text(text: str, split_sentences: Callable[[str], list[str]], *, split_on_newlines: bool = True,
               max_words: int = 64) -> tuple[str, ...]:
    """The sentences of ``text`` as described in the module docstring, in order."""
    pieces = text.splitlines() if split_on_newlines else [text]
    sentences: list[str] = []
    for piece in pieces:
        if not piece.strip():
            continue
        for sentence in split_sentences(piece):
            sentence = sentence.strip()
            if not has_words(sentence):
                continue
            words = sentence.split()
            if max_words and len(words) > max_words:
                sentences += [" ".join(words[i:i + max_words]) for i in range(0, len(words), max_words)]
            else:
                sentences.append(sentence)
    return tuple(sentences)


# (text, split_on_newlines, max_words) -> sentences, least recently used out first.
_SPLITS: OrderedDict[tuple[str, bool, int], tuple[str, ...]] = OrderedDict()
_SPLITS_LIMIT = 65_536
_SPLITS_LOCK = threading.Lock()


def cached_split(text: str, split_sentences: Callable[[str], list[str]], *, split_on_newlines: bool = True,
                 max_words: int = 64) -> tuple[str, ...]:
    """:func:`split_text`, remembered per text and options for the process.

    The key leaves out the splitter: every context's ``split_sentences`` is the core's one
    untrained Punkt splitter, so the sentences of a text are the same whichever evaluator asks.
    """
    key = (text, split_on_newlines, max_words)
    with _SPLITS_LOCK:
        found = _SPLITS.get(key)
        if found is not None:
            _SPLITS.move_to_end(key)
            return found
    found = split_text(text, split_sentences, split_on_newlines=split_on_newlines, max_words=max_words)
    with _SPLITS_LOCK:
        _SPLITS[key] = found
        if len(_SPLITS) > _SPLITS_LIMIT:
            _SPLITS.popitem(last=False)
    return found
