"""ROUGE evaluator: ROUGE-1, ROUGE-2 and ROUGE-L F1 of the actual answer against the expected answer.

Every value is identical (same float, bit for bit) to the F-measure that the ``rouge-score``
package returns for ``RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=...)
.score(expected_answer, actual_answer)``: the tokenizer is the package's own rules (lower-case,
every run of characters outside ``[a-z0-9]`` is a separator, Porter stemming of tokens longer
than 3 characters) and the counts feed the same arithmetic in the same order.

It is much faster than calling ``RougeScorer.score`` row by row, because:

* an LLM dataset repeats each expected answer once per model, so each one is tokenised and
  counted once while it stays in an LRU cache of recently seen expected answers;
* the Porter stemmer, the main cost of tokenisation, runs once per distinct token (cached);
* the LCS length comes from a bit-parallel algorithm (Hyyrö 2004, after Allison and Dix 1986)
  on Python big integers, O(n * m / w) word operations instead of the O(n * m) table.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import ClassVar, Iterable, Sequence

from rouge_score.tokenize import NON_ALPHANUM_RE, VALID_TOKEN_RE

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult

__all__ = ["RougeEvaluator", "lcs_length"]

# A token list at most this long gets all its LCS bit masks at once with shifts (cheap for
# short texts); a longer one builds each mask on demand from byte arrays, so that a 1 MB
# answer does not cost O(n^2 / w) shifts for tokens the other text does not even contain.
_EAGER_MASKS_MAX_TOKENS = 1024
# Analyses of distinct expected answers kept, within and between evaluate() calls (batches).
# A batch with more distinct expected answers than this, in model-major order, analyses each
# again per model (about 35% slower on the benchmark's rows); the default 512-row batch fits.
_REFERENCE_CACHE_SIZE = 2048
# For ASCII text, rouge-score's substitution of non-[a-z0-9] runs by a space is the same, once
# split on whitespace, as translating each such character to a space, which is much faster.
_ASCII_SEPARATORS = str.maketrans(
    {i: " " for i in range(128) if not ("a" <= chr(i) <= "z" or "0" <= chr(i) <= "9")}
)
# Distinct raw tokens whose stem is remembered; the cache is emptied when it grows past this.
_STEM_CACHE_SIZE = 500_000


class _Analysis:
    """Tokens of one text and what ROUGE needs from them, computed once per text.

    Attributes:
        tokens: the text's tokens, exactly as rouge-score's tokenizer returns them.
        unigrams / bigrams: n-gram -> count (occurrences).
    """

    __slots__ = ("tokens", "unigrams", "bigrams", "_masks", "_positions")

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.unigrams = Counter(tokens)
        self.bigrams = Counter(zip(tokens, tokens[1:]))
        self._masks: dict[str, int] | None = None
        self._positions: dict[str, list[int]] | None = None

    def masks_for(self, needed: Iterable[str]) -> dict[str, int]:
        """Bit masks (bit i set where ``tokens[i] == token``) for at least the ``needed`` tokens."""
        tokens = self.tokens
        if len(tokens) <= _EAGER_MASKS_MAX_TOKENS:
            if self._masks is None:
                masks: dict[str, int] = {}
                get = masks.get
                for i, token in enumerate(tokens):
                    masks[token] = get(token, 0) | (1 << i)
                self._masks = masks
            return self._masks
        if self._masks is None:
            self._masks = {}
            positions: dict[str, list[int]] = {}
            for i, token in enumerate(tokens):
                found = positions.get(token)
                if found is None:
                    positions[token] = [i]
                else:
                    found.append(i)
            self._positions = positions
        masks = self._masks
        positions = self._positions
        n_bytes = (len(tokens) + 7) // 8
        for token in needed:
            if token in masks or token not in positions:
                continue
            buffer = bytearray(n_bytes)
            for i in positions[token]:
                buffer[i >> 3] |= 1 << (i & 7)
            masks[token] = int.from_bytes(buffer, "little")
        return masks


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length (in tokens) of the longest common subsequence of ``a`` and ``b``.

    A thin wrapper over the bit-parallel routine the evaluator uses, handy for tests.
    """
    if not a or not b:
        return 0
    first, second = _Analysis(list(a)), _Analysis(list(b))
    return _lcs(first, second)


def _lcs(x: _Analysis, y: _Analysis) -> int:
    """LCS length of two analysed texts, bit-parallel (Hyyrö 2004).

    The longer text is laid along the bits of one integer V (one bit per token, all ones at
    the start); each token t of the shorter text updates V with U = V & mask[t];
    V = (V + U) | (V - U). The LCS length is then the number of zero bits among V's low m
    bits. Tokens of the shorter text that the longer one lacks leave V unchanged (U = 0), so
    they are skipped before the loop.
    """
    if len(x.tokens) < len(y.tokens):
        x, y = y, x
    m = len(x.tokens)
    present = x.unigrams
    walk = [t for t in y.tokens if t in present]
    if not walk:
        return 0
    masks = x.masks_for(y.unigrams.keys() & present.keys())
    full = (1 << m) - 1
    v = full
    for token in walk:
        u = v & masks[token]
        # Carries may run past bit m-1; they never reach back into the low m bits.
        v = (v + u) | (v - u)
    return m - (v & full).bit_count()


def _overlap(a: Counter, b: Counter) -> int:
    """Clipped n-gram matches: sum over shared n-grams of the smaller count."""
    common = a.keys() & b.keys()
    # map() over the set twice visits it in the same order; this keeps the loop in C.
    return sum(map(min, map(a.__getitem__, common), map(b.__getitem__, common)))


def _fmeasure(precision: float, recall: float) -> float:
    # Same expression, in the same order, as rouge_score.scoring.fmeasure, so floats match.
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


class RougeEvaluator(Evaluator):
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 per row, each in [0, 1] (1 = same tokens in the same order)."""

    id = "rouge"
    display_name: ClassVar[str] = "ROUGE"
    tagline: ClassVar[str] = "Word-overlap F1 (ROUGE-1, ROUGE-2, ROUGE-L) of the answer against the expected answer."
    description: ClassVar[str] = (
        "ROUGE compares the actual answer with the expected answer by the words they share. "
        "**ROUGE-1** and **ROUGE-2** are the F1 of clipped unigram and bigram matches "
        "(precision over the answer's n-grams, recall over the expected answer's); **ROUGE-L** "
        "is the F1 of the longest common subsequence of tokens, so it also rewards keeping the "
        "expected word order. Text is lower-cased, anything other than `a-z` and `0-9` "
        "separates tokens, and tokens longer than 3 characters are Porter-stemmed "
        "(parameter `use_stemmer`). Values are identical to the `rouge-score` package's "
        "F-measure. An empty answer scores 0 on every metric."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "use_stemmer",
            bool,
            True,
            "Porter-stem tokens longer than 3 characters before matching (rouge-score's "
            "use_stemmer), so that e.g. 'running' matches 'runs'.",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "rouge_1",
            "ROUGE-1",
            "F1 of clipped unigram (single token) matches between the actual and the expected answer.",
            threshold=0.75,
        ),
        Metric(
            "rouge_2",
            "ROUGE-2",
            "F1 of clipped bigram (two consecutive tokens) matches between the actual and the expected answer.",
            threshold=0.75,
        ),
        Metric(
            "rouge_l",
            "ROUGE-L",
            "F1 of the longest common subsequence of tokens of the actual and the expected answer.",
            threshold=0.75,
            is_primary=True,
        ),
    )
    category: ClassVar[str] = "Summarization"

    def __init__(self, params, ctx) -> None:
        super().__init__(params, ctx)
        if self.params["use_stemmer"]:
            # The same stemmer (and mode) as rouge_score.tokenizers.DefaultTokenizer, loaded
            # without NLTK's package __init__ (see .porter).
            from .porter import porter_stemmer

            self._stem = porter_stemmer()
        else:
            self._stem = None
        # raw token -> final token, or None when rouge-score would drop it.
        self._stems: dict[str, str | None] = {}
        self._drops_tokens = False
        # expected answer -> its analysis; references repeat across models.
        self._reference = functools.lru_cache(maxsize=_REFERENCE_CACHE_SIZE)(self._analyse)

    # -- tokenisation ---------------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text``, the same list as ``rouge_score.tokenize.tokenize(text, stemmer)``."""
        # After the substitution only [a-z0-9] and spaces remain, so str.split() yields the
        # same non-empty pieces as rouge-score's split on \s+ followed by its validity filter.
        # Non-ASCII text takes rouge-score's own regex (lower() may map e.g. the Kelvin sign
        # to 'k', and the regex sees the lowered text exactly as rouge-score does).
        if text.isascii():
            pieces = text.lower().translate(_ASCII_SEPARATORS).split()
        else:
            pieces = NON_ALPHANUM_RE.sub(" ", text.lower()).split()
        if self._stem is None:
            return pieces
        stems = self._stems
        missing = set(pieces).difference(stems)
        if missing:
            if len(stems) + len(missing) > _STEM_CACHE_SIZE:
                stems.clear()
                missing = set(pieces)
            stem = self._stem
            for raw in missing:
                token = stem(raw) if len(raw) > 3 else raw
                if not VALID_TOKEN_RE.match(token):
                    token = None
                    self._drops_tokens = True
                stems[raw] = token
        tokens = [stems[raw] for raw in pieces]
        if self._drops_tokens:
            tokens = [t for t in tokens if t is not None]
        return tokens

    def _analyse(self, text: str) -> _Analysis:
        return _Analysis(self.tokenize(text))

    # -- scoring --------------------------------------------------------------------------

    def score_texts(self, reference: str, candidate: str) -> dict[str, float]:
        """ROUGE-1/2/L F1 of ``candidate`` (actual answer) against ``reference`` (expected)."""
        return self._score(self._reference(reference or ""), _Analysis(self.tokenize(candidate or "")))

    @staticmethod
    def _score(ref: _Analysis, cand: _Analysis) -> dict[str, float]:
        values: dict[str, float] = {}
        n_ref, n_cand = len(ref.tokens), len(cand.tokens)
        for key, ref_grams, cand_grams, n in (
            ("rouge_1", ref.unigrams, cand.unigrams, 1),
            ("rouge_2", ref.bigrams, cand.bigrams, 2),
        ):
            matches = _overlap(ref_grams, cand_grams)
            # max(..., 1) as in rouge-score: no n-grams on a side gives precision/recall 0.
            precision = matches / max(n_cand - n + 1, 1)
            recall = matches / max(n_ref - n + 1, 1)
            values[key] = _fmeasure(precision, recall)
        if n_ref and n_cand:
            lcs = _lcs(ref, cand)
            values["rouge_l"] = _fmeasure(lcs / n_cand, lcs / n_ref)
        else:
            values["rouge_l"] = 0.0
        return values

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        return [RowResult(values=self.score_texts(row.expected_output, row.actual_output)) for row in rows]
