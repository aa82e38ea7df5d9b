"""BLEU evaluator: cumulative BLEU-1 to BLEU-4 of the actual answer against the expected answer.

Scores are bit-for-bit NLTK's ``sentence_bleu`` with one reference (the expected answer), the
four weight vectors below and this smoothing, computed here from one set of n-gram counts:

* BLEU-n is the *cumulative* score: brevity penalty x geometric mean of the modified
  (clipped) 1..n-gram precisions with uniform weights 1/n: BLEU-1 = (1,), BLEU-2 =
  (1/2, 1/2), BLEU-3 = (1/3, 1/3, 1/3), BLEU-4 = (1/4, 1/4, 1/4, 1/4).
* An answer of c < n tokens has no n-grams of order above c, so its BLEU-n uses the weights
  of BLEU-c (NLTK's ``auto_reweigh`` idea, applied to every n): a one-word answer equal to a
  one-word expected answer scores 1.0 on all four metrics instead of being punished for
  n-grams it cannot have.
* Smoothing is NLTK's ``SmoothingFunction(epsilon=0.1).method1``: an n-gram order with no
  match counts as 0.1 matches over its n-gram total. Orders with matches are left exactly
  as they are, so a score with every order matched is the unsmoothed BLEU of Papineni et
  al. (2002), and a fluent answer that shares no 4-gram still gets a small, ordered BLEU-4
  instead of 0 (method 0) while the other orders keep their exact precisions (unlike
  add-one smoothing, method 2, which shifts every order).
* When no unigram matches at all, every BLEU-n is 0 (NLTK's rule, before smoothing).
* An empty or whitespace-only answer or expected answer (no tokens) scores 0.0 everywhere.

Tokens are those of NLTK's ``word_tokenize`` except for the sentence splitter: sentences
come from an untrained Punkt splitter (no NLTK data download), and each sentence is split by
``NLTKWordTokenizer`` (Treebank rules: punctuation and clitics like ``n't`` are tokens).
:mod:`.word_tokens` computes exactly those tokens without importing NLTK (its tests compare
with NLTK itself), and each distinct text is tokenised once per run. Matching is
case-sensitive unless the ``lowercase`` parameter is set.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from typing import ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult

from .bleu_counts import clipped_matches
from .word_tokens import treebank_words, words

__all__ = ["BleuEvaluator", "BLEU_WEIGHTS", "SMOOTHING_EPSILON", "bleu_scores", "scores_from_matches", "ngram_counts",
           "treebank_words"]

#: Cumulative uniform weights of BLEU-1 .. BLEU-4, in that order.
BLEU_WEIGHTS: tuple[tuple[float, ...], ...] = (
    (1.0,),
    (1 / 2, 1 / 2),
    (1 / 3, 1 / 3, 1 / 3),
    (1 / 4, 1 / 4, 1 / 4, 1 / 4),
)
#: Matches counted for an n-gram order that has none (NLTK smoothing method 1).
SMOOTHING_EPSILON = 0.1
_KEYS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4")
_ZEROS = dict.fromkeys(_KEYS, 0.0)
# Tokenised expected answers (with their n-gram counts) kept between evaluate() calls. An entry
# takes about 30 KB for a 70-token answer, so 1024 of them stay near 30 MB; the default 512-row
# batch fits twice over (in model-major order, a reference repeats one batch per model later
# only when the test suite has at most this many test cases).
_REFERENCE_CACHE_SIZE = 1024
# Tokens of distinct texts kept for the run (emptied when full): an answer or expected answer
# that recurs (the same text under several models or test cases) is tokenised once. Texts
# longer than _TOKEN_CACHE_MAX_CHARS are not kept: they rarely recur and would hold megabytes.
_TOKEN_CACHE_SIZE = 50_000
_TOKEN_CACHE_MAX_CHARS = 5_000


def _ngrams(tokens: list[str], n: int) -> Counter:
    """Counts of the n-grams of ``tokens``; unigrams are the tokens themselves (cheaper to hash)."""
    return Counter(tokens) if n == 1 else Counter(zip(*(tokens[i:] for i in range(n))))


def ngram_counts(tokens: list[str]) -> list[Counter]:
    """Counts of the 1- to 4-grams of ``tokens`` (index n - 1 holds the n-grams)."""
    return [_ngrams(tokens, n) for n in range(1, len(BLEU_WEIGHTS) + 1)]


def bleu_scores(reference_length: int, reference_counts: list[Counter], candidate: list[str]) -> dict[str, float]:
    """BLEU-1..4 of ``candidate`` tokens against one reference given by its length and n-gram counts.

    Bit-for-bit NLTK's ``sentence_bleu([reference], candidate, weights=[BLEU-1..4 weights,
    each cut to len(candidate) orders], smoothing_function=SmoothingFunction(0.1).method1)``,
    computed from one set of n-gram counts instead of one NLTK pass per order and weight.
    """
    c = len(candidate)
    if not reference_length or not c:
        return dict(_ZEROS)
    matches = []
    matched = 1
    for n in range(1, min(c, len(BLEU_WEIGHTS)) + 1):
        # With no (n-1)-gram in common there is no n-gram in common either (its first n - 1
        # tokens would be one): the counts need not be built.
        if matched:
            ref = reference_counts[n - 1]
            hyp = _ngrams(candidate, n)
            # Clipped matches over the n-grams both hold, summed in C (set intersection, map).
            common = hyp.keys() & ref.keys()
            matched = sum(map(min, map(hyp.__getitem__, common), map(ref.__getitem__, common)))
        matches.append(matched)
    return scores_from_matches(reference_length, c, matches)


def scores_from_matches(reference_length: int, c: int, matches: Sequence[int]) -> dict[str, float]:
    """BLEU-1..4 from the reference's length, the candidate's length ``c`` and the clipped matches of
    its 1-, 2-, ... n-grams (``matches[n - 1]``; orders above ``c`` are not read), as NLTK computes them."""
    if not reference_length or not c:
        return dict(_ZEROS)
    if not matches[0]:
        return dict(_ZEROS)  # NLTK: no unigram match -> 0, before any smoothing
    log_precisions = []  # log p_n for the orders the answer has (n <= c)
    for n in range(1, min(c, len(BLEU_WEIGHTS)) + 1):
        matched, total = matches[n - 1], c - n + 1
        # float(Fraction(matched, total)) is matched / total (int true division), as in NLTK.
        log_precisions.append(math.log(matched / total if matched else SMOOTHING_EPSILON / total))
    bp = 1 if c > reference_length else math.exp(1 - reference_length / c)
    return {
        key: bp * math.exp(math.fsum(w * lp for w, lp in zip(BLEU_WEIGHTS[min(n, c) - 1], log_precisions)))
        for n, key in enumerate(_KEYS, start=1)
    }


def _metric(n: int, primary: bool = False) -> Metric:
    orders = "unigram" if n == 1 else f"1- to {n}-gram"
    return Metric(
        f"bleu_{n}",
        f"BLEU-{n}",
        f"Cumulative BLEU-{n}: brevity penalty times the geometric mean of the clipped {orders} "
        "precisions of the actual answer against the expected answer.",
        threshold=0.75,
        is_primary=primary,
    )


class BleuEvaluator(Evaluator):
    """Cumulative BLEU-1..BLEU-4 per row, each in [0, 1] (1 = the answer equals the expected answer)."""

    id = "bleu"
    display_name: ClassVar[str] = "BLEU"
    tagline: ClassVar[str] = "N-gram precision (BLEU-1 to BLEU-4) of the answer against the expected answer."
    description: ClassVar[str] = (
        "BLEU scores how many of the actual answer's n-grams (runs of n tokens) also occur in "
        "the expected answer, each n-gram counted at most as often as the expected answer has "
        "it, and multiplies by a brevity penalty `exp(1 - r/c)` when the answer (c tokens) is "
        "shorter than the expected answer (r tokens). **BLEU-n** is cumulative: the geometric "
        "mean of the 1- to n-gram precisions with equal weights 1/n (BLEU-2 uses (0.5, 0.5)); "
        "an answer shorter than n tokens gets its BLEU-(length) instead. "
        "An n-gram order with no match counts as 0.1 matches (NLTK smoothing method 1, "
        "epsilon 0.1), so one missing order does not zero the score; with no matching word at "
        "all the score is 0. Tokens are NLTK's Treebank word tokens of each sentence "
        "(untrained Punkt sentence split, no data download); case-sensitive unless "
        "`lowercase` is set. An empty answer or expected answer scores 0. Scores equal "
        "NLTK's `sentence_bleu`."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "lowercase",
            bool,
            False,
            "Lower-case both texts before matching (BLEU is case-sensitive by default).",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (_metric(1, primary=True), _metric(2), _metric(3), _metric(4))
    category: ClassVar[str] = "Summarization"

    def __init__(self, params, ctx) -> None:
        super().__init__(params, ctx)
        self._lowercase: bool = self.params["lowercase"]
        # expected answer -> (token count, its 1..4-gram counts); references repeat across models,
        # so each is tokenised and counted once while it stays among the most recently used.
        self._reference = functools.lru_cache(maxsize=_REFERENCE_CACHE_SIZE)(self._analyse_reference)
        self._tokens: dict[str, list[str]] = {}  # text -> its tokens (see _TOKEN_CACHE_SIZE)

    def tokenize(self, text: str) -> list[str]:
        """Word tokens of ``text``: Treebank tokens of each (untrained Punkt) sentence.

        The list is shared with the run's token cache: callers must not change it.
        """
        tokens = self._tokens.get(text)
        if tokens is None:
            tokens = words(text.lower() if self._lowercase else text)
            if len(text) <= _TOKEN_CACHE_MAX_CHARS:
                if len(self._tokens) >= _TOKEN_CACHE_SIZE:
                    self._tokens.clear()
                self._tokens[text] = tokens
        return tokens

    def _analyse_reference(self, text: str) -> tuple[int, list[Counter]]:
        """(token count, 1..4-gram counts) of an expected answer."""
        tokens = self.tokenize(text)
        return len(tokens), ngram_counts(tokens)

    def score_texts(self, reference: str, candidate: str) -> dict[str, float]:
        """BLEU-1..4 of ``candidate`` (actual answer) against ``reference`` (expected answer)."""
        return bleu_scores(*self._reference(reference or ""), self.tokenize(candidate or ""))

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        # The whole batch's n-grams are matched at once (:mod:`.bleu_counts`); the values are those
        # score_texts gives row by row.
        references = [self.tokenize(row.expected_output or "") for row in rows]
        candidates = [self.tokenize(row.actual_output or "") for row in rows]
        matches = clipped_matches(references, candidates, len(BLEU_WEIGHTS))
        return [RowResult(values=scores_from_matches(len(reference), len(candidate), matched))
                for reference, candidate, matched in zip(references, candidates, matches)]
