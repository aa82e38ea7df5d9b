"""Word error rate, as jiwer (and so Hugging Face ``evaluate``'s ``wer``, which fmeval uses) computes it.

Texts become words the way jiwer's default transformation makes them: runs of two or more whitespace
characters become one space, the ends are stripped, and the text is split on single spaces. Over a list
of pairs the rate is the sum of word edits (substitutions + deletions + insertions, the Levenshtein
distance between the word lists) divided by the sum of reference words; with no reference word at all
it is the number of inserted words (jiwer's convention).
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["words", "word_edit_distance", "word_error_rate"]

_SPACES = re.compile(r"\s\s+")


def words(text: str) -> list[str]:
    """``text`` split into words as jiwer's ``wer_default`` transformation splits it."""
    return [w for w in _SPACES.sub(" ", text).strip().split(" ") if w]


def word_edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Fewest word substitutions, deletions and insertions turning ``reference`` into ``hypothesis``."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, start=1):
        current = [i] + [0] * len(hypothesis)
        for j, hyp_word in enumerate(hypothesis, start=1):
            current[j] = min(previous[j] + 1,  # deletion
                             current[j - 1] + 1,  # insertion
                             previous[j - 1] + (ref_word != hyp_word))  # substitution or hit
        previous = current
    return previous[-1]


def word_error_rate(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Corpus word error rate of ``hypotheses`` against ``references`` (pairs in order), >= 0."""
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    edits = reference_words = hypothesis_words = 0
    for reference, hypothesis in zip(references, hypotheses):
        ref, hyp = words(reference), words(hypothesis)
        edits += word_edit_distance(ref, hyp)
        reference_words += len(ref)
        hypothesis_words += len(hyp)
    if reference_words == 0:
        return float(hypothesis_words)
    return edits / reference_words
