"""The rows two runs' evaluators share, as index arrays: what :mod:`.comparison` pairs its values on.

Rows pair up on (test case, model). For a pair of evaluators :class:`RowPairs` holds, once, the rows of
A and of B that pair up (in A's order), each compared model's share of them, and the test cases of one
side only; every metric and model of the evaluator then takes its pairs by indexing arrays (at a
million rows x 10 models x 5 evaluators, selecting the rows in Python per metric and model was most
of ``sonar compare``'s time). A run's evaluators usually score the same rows in the same order, so
:class:`PairingMemo` keeps the last few pairings and hands one to the next pair of evaluators whose
key lists are equal: comparing two lists of a million strings is a loop in C, pairing them again a
Python step per row.
"""

from __future__ import annotations

from itertools import repeat
from typing import NamedTuple, Sequence

import numpy as np

from .run_types import EvaluatorData

__all__ = ["RowPairs", "PairingMemo", "model_codes"]

#: Pairings a memo keeps (each holds a few arrays of the rows' size).
KEPT = 3


def model_codes(model_keys: Sequence[str], models: Sequence[str]) -> np.ndarray:
    """Each row's model as its position in ``models`` (-1: a model not compared), as int64."""
    position = {model: k for k, model in enumerate(models)}
    return np.fromiter(map(position.get, model_keys, repeat(-1)), dtype=np.int64, count=len(model_keys))


def _numbered(keys_a: Sequence[str], keys_b: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Both sides' keys as numbers (equal keys, equal numbers), and how many distinct keys there are."""
    seen = dict.fromkeys(keys_a)
    seen.update(dict.fromkeys(keys_b))
    number = {key: n for n, key in enumerate(seen)}.__getitem__
    return (np.fromiter(map(number, keys_a), dtype=np.int64, count=len(keys_a)),
            np.fromiter(map(number, keys_b), dtype=np.int64, count=len(keys_b)), len(seen))


def _matched(ea: EvaluatorData, eb: EvaluatorData) -> tuple[np.ndarray, np.ndarray, int]:
    """The rows of A whose (test case, model) B has, B's row for each (B's last, for a key it holds twice,
    as a dictionary of B's keys keeps the last), and B's count of distinct keys.

    Each (test case, model) becomes one integer; B's distinct integers, sorted, are searched for A's:
    array operations where a dictionary of (test case, model) tuples hashes a tuple per row.
    """
    case_a, case_b, _ = _numbered(ea.test_case_keys, eb.test_case_keys)
    model_a, model_b, count = _numbered(ea.model_keys, eb.model_keys)
    key_a, key_b = case_a * count + model_a, case_b * count + model_b
    order = np.argsort(key_b, kind="stable")  # equal keys keep their row order: the last is B's last row
    ordered = key_b[order]
    last = np.ones(ordered.size, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    keys, rows = ordered[last], order[last]
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    at = np.searchsorted(keys, key_a)
    at[at == keys.size] = 0
    rows_a = np.flatnonzero(keys[at] == key_a)
    return rows_a, rows[at[rows_a]], int(keys.size)


class RowPairs(NamedTuple):
    """The rows of two evaluators that pair up on (test case, model)."""

    #: Row numbers in A and in B of each pair, in A's row order.
    rows_a: np.ndarray
    rows_b: np.ndarray
    #: Model -> its pairs' (rows in A, rows in B), in A's row order.
    by_model: dict[str, tuple[np.ndarray, np.ndarray]]
    #: A's test case keys as an object array (the flips index it).
    cases_a: np.ndarray
    #: Rows of A without a pair; distinct (test case, model) keys of B without one.
    rows_only_a: int
    rows_only_b: int
    #: Test cases of one side only, each once, in its row order.
    test_cases_only_a: tuple[str, ...]
    test_cases_only_b: tuple[str, ...]


def _pair(ea: EvaluatorData, eb: EvaluatorData, models: Sequence[str]) -> RowPairs:
    rows_a, rows_b, keys_b = _matched(ea, eb)
    codes = model_codes(ea.model_keys, models)[rows_a]
    by_model = {}
    for k, model in enumerate(models):
        mine = np.flatnonzero(codes == k)
        by_model[model] = (rows_a[mine], rows_b[mine])
    set_a, set_b = set(ea.test_case_keys), set(eb.test_case_keys)
    return RowPairs(rows_a, rows_b, by_model, np.array(ea.test_case_keys, dtype=object),
                    len(ea.test_case_keys) - len(rows_a), keys_b - len(rows_a),
                    tuple(c for c in dict.fromkeys(ea.test_case_keys) if c not in set_b),
                    tuple(c for c in dict.fromkeys(eb.test_case_keys) if c not in set_a))


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    return a is b or a == b


class PairingMemo:
    """Pairings and model codes of the last key lists seen, reused while the key lists stay equal."""

    def __init__(self, models: Sequence[str]) -> None:
        self.models = list(models)
        #: (the four key lists, their pairing), the last few: an evaluator that scored fewer rows comes between
        #: evaluators that share theirs.
        self._pairs: list[tuple[tuple[Sequence[str], ...], RowPairs]] = []
        #: (model keys, their codes), the last few of each side.
        self._codes: list[tuple[Sequence[str], np.ndarray]] = []

    def pairs(self, ea: EvaluatorData, eb: EvaluatorData) -> RowPairs:
        """The pairing of ``ea``'s rows with ``eb``'s (the last one, when the four key lists are equal to its)."""
        keys = (ea.test_case_keys, ea.model_keys, eb.test_case_keys, eb.model_keys)
        for kept, found in self._pairs:
            if all(_same(x, y) for x, y in zip(kept, keys)):
                return found
        found = _pair(ea, eb, self.models)
        self._pairs = [*self._pairs[-(KEPT - 1):], (keys, found)]
        return found

    def codes(self, model_keys: Sequence[str]) -> np.ndarray:
        """:func:`model_codes` of ``model_keys`` over the compared models (kept for equal lists)."""
        for keys, codes in self._codes:
            if _same(keys, model_keys):
                return codes
        codes = model_codes(model_keys, self.models)
        self._codes = [*self._codes[-(2 * KEPT - 1):], (model_keys, codes)]
        return codes
