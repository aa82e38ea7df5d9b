"""Looping Detection: did the generation fall into a loop, repeating itself?

Three per-row scores of the actual answer, each in [0, 1]:

* ``unique_sentences`` = distinct sentences / all sentences, counting only sentences of at
  least 10 characters (shorter ones, such as list markers or "Yes.", repeat innocently).
  Higher is better; 1.0 means no sentence repeats.
* ``longest_repeated_substring`` = L * c / n, where L is the length (characters) of the
  longest substring that occurs at least twice without overlapping itself, c its number of
  non-overlapping occurrences and n the answer's length in characters. Lower is better; an
  answer that is one block said twice scores 1.0.
* ``compression_ratio`` = zlib level-9 compressed size / original size, both in bytes of
  UTF-8, capped at 1.0 (zlib adds a few bytes of framing, so short texts would exceed it).
  Higher is better: repetitive text compresses well and scores low.

Values where a formula has nothing to measure, chosen to mean "no loop found":
an empty or whitespace-only answer scores unique_sentences 1.0, longest_repeated_substring 0.0
and compression_ratio 1.0; an answer with no sentence of 10+ characters (one character, "OK.")
scores unique_sentences 1.0; an answer with no repeated character scores
longest_repeated_substring 0.0 (one character: nothing can repeat).
"""

from __future__ import annotations

import zlib
from collections import Counter
from typing import ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Row, RowResult

__all__ = ["LoopingDetectionEvaluator", "MIN_SENTENCE_CHARS"]

#: Sentences shorter than this many characters are left out of unique_sentences.
MIN_SENTENCE_CHARS = 10
#: Longest excerpt of a repeated text kept in a row's details (characters).
EXCERPT_CHARS = 200


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


class LoopingDetectionEvaluator(Evaluator):
    """Scores how much each answer repeats itself: sentences, substrings, compressibility."""

    id = "looping_detection"
    display_name: ClassVar[str] = "Looping detection"
    tagline: ClassVar[str] = "Detect answers in which the generation went into a loop."
    description: ClassVar[str] = (
        "Measures how much an answer repeats itself, a sign that generation got stuck in a loop. "
        "Three scores per answer, each from 0 to 1:\n\n"
        "- **Unique sentences** (primary, higher is better): distinct sentences divided by all "
        f"sentences, leaving out sentences under {MIN_SENTENCE_CHARS} characters.\n"
        "- **Longest repeated substring** (lower is better): the length of the longest text that "
        "occurs twice without overlapping, times its number of occurrences, divided by the "
        "answer's length.\n"
        "- **Compression ratio** (higher is better): zlib (level 9) compressed size over original "
        "size in UTF-8 bytes, capped at 1; repetitive text compresses well and scores low.\n\n"
        "An empty or blank (whitespace-only) answer scores 1, 0 and 1: nothing in it loops. The repeated substring is found "
        "with a suffix array, so even a megabyte-long answer is scored in seconds."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.ACTUAL_ANSWER,)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "unique_sentences",
            "Unique Sentences",
            f"Distinct sentences / all sentences of the answer, sentences under {MIN_SENTENCE_CHARS} "
            "characters left out (1.0 when there is none).",
            higher_is_better=True,
            threshold=0.75,
            is_primary=True,
        ),
        Metric(
            "longest_repeated_substring",
            "Longest Repeated Substring",
            "Length of the longest non-overlapping repeated substring x its number of "
            "non-overlapping occurrences / length of the answer (characters).",
            higher_is_better=False,
            threshold=0.75,
        ),
        Metric(
            "compression_ratio",
            "Compression Ratio",
            "zlib level-9 compressed size / original size, in UTF-8 bytes, capped at 1.0.",
            higher_is_better=True,
            threshold=0.75,
        ),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        for row in rows:
            text = row.actual_output or ""
            # A blank answer does not loop, though "   " is one space repeated three times.
            yield self.score(text if text.strip() else "")

    def score(self, text: str) -> RowResult:
        """All three metrics and their supporting facts for one answer."""
        unique, sentence_facts = self.unique_sentences(text)
        repeated, substring_facts = self.longest_repeated_substring(text)
        ratio, compression_facts = self.compression_ratio(text)
        return RowResult(
            values={
                "unique_sentences": unique,
                "longest_repeated_substring": repeated,
                "compression_ratio": ratio,
            },
            details={**sentence_facts, **substring_facts, **compression_facts},
        )

    def unique_sentences(self, text: str) -> tuple[float, dict]:
        sentences = [s.strip() for s in self.ctx.split_sentences(text)]
        counted = Counter(s for s in sentences if len(s) >= MIN_SENTENCE_CHARS)
        total = sum(counted.values())
        facts = {"sentences_counted": total, "most_repeated_sentence": None, "most_repeated_sentence_count": 0}
        if total == 0:
            return 1.0, facts
        sentence, times = counted.most_common(1)[0]
        if times > 1:
            facts["most_repeated_sentence"] = _excerpt(sentence)
            facts["most_repeated_sentence_count"] = times
        return len(counted) / total, facts

    @staticmethod
    def longest_repeated_substring(text: str) -> tuple[float, dict]:
        # Imported on first use: the suffix array needs numpy, whose import costs more than a
        # small run, and registering the built-in plugins must not pay it when this does not run.
        from .suffix_array import longest_repeat

        repeat = longest_repeat(text)
        facts = {
            "longest_repeated_substring_text": _excerpt(text[repeat.start : repeat.start + repeat.length]) or None,
            "longest_repeated_substring_length": repeat.length,
            "longest_repeated_substring_count": repeat.count,
        }
        if repeat.length == 0:
            return 0.0, facts
        return repeat.length * repeat.count / len(text), facts

    @staticmethod
    def compression_ratio(text: str) -> tuple[float, dict]:
        raw = text.encode("utf-8")
        if not raw:
            return 1.0, {"compressed_bytes": 0, "original_bytes": 0}
        compressed = len(zlib.compress(raw, 9))
        return min(1.0, compressed / len(raw)), {"compressed_bytes": compressed, "original_bytes": len(raw)}
