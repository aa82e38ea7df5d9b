"""Suffix array, LCP array and the longest non-overlapping repeated substring, in numpy.

The looping detector needs the longest substring that occurs at least twice in an answer
that may be a megabyte long; the textbook double loop is quadratic (hours on 1 MB). Here:

* the suffix array is built by prefix doubling: round k sorts suffixes by their first 2^k
  characters using the ranks of round k-1 as a pair key, O(n log n) per round in numpy and
  at most log2(n) + 1 rounds (fewer when the text stops repeating itself early);
* the LCP array (longest common prefix of suffixes adjacent in the array) is computed by
  binary lifting over the ranks each round produced: two positions share their first 2^k
  characters exactly when their round-k ranks are equal;
* the longest repeat whose two occurrences do not overlap is found by binary search on its
  length L: such a repeat exists when some run of adjacent suffixes with LCP >= L spans
  start positions at least L apart (and if one exists for L, one exists for L - 1).

Everything works on code points (``str`` indices), so lengths are in characters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Repeat", "suffix_array", "lcp_array", "longest_repeat"]


def _codes(text: str) -> np.ndarray:
    """The text's code points as an integer array (UTF-32 needs no surrogate handling)."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def _doubling_ranks(codes: np.ndarray) -> list[np.ndarray]:
    """Ranks of every position's first 2^k characters, for k = 0, 1, ... until all differ.

    ``ranks[k][i] == ranks[k][j]`` (i != j) exactly when the texts at i and j agree on
    their first 2^k characters, both having that many left; the last array is a permutation.
    """
    n = len(codes)
    _, rank = np.unique(codes, return_inverse=True)
    rank = rank.astype(np.int64).reshape(-1)
    tables = [rank.astype(np.int32)]
    # Suffixes in the order of their current ranks: sorting the next key in this order
    # finds long presorted runs (the first half of the key is already sorted), which the
    # stable sort (timsort) exploits.
    order = np.argsort(rank, kind="stable")
    step = 1
    while n and int(rank.max()) < n - 1:
        # Pair key (rank of the first half, 1 + rank of the second half or 0 past the end):
        # the 0 sorts a shorter suffix before any longer one sharing its characters.
        second = np.zeros(n, dtype=np.int64)
        second[: n - step] = rank[step:] + 1
        key = (rank * (n + 1) + second)[order]
        perm = np.argsort(key, kind="stable")
        order = order[perm]
        sorted_key = key[perm]
        new_sorted = np.empty(n, dtype=np.int64)
        new_sorted[0] = 0
        np.cumsum(sorted_key[1:] != sorted_key[:-1], out=new_sorted[1:])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = new_sorted
        tables.append(rank.astype(np.int32))
        step *= 2
    return tables


def suffix_array(text: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The suffix array of ``text`` (start positions in sorted order) and the doubling ranks."""
    codes = _codes(text)
    tables = _doubling_ranks(codes)
    sa = np.empty(len(codes), dtype=np.int64)
    if len(codes):
        sa[tables[-1]] = np.arange(len(codes), dtype=np.int64)
    return sa, tables


def lcp_array(sa: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """``lcp[i]`` = length of the common prefix of suffixes ``sa[i]`` and ``sa[i + 1]``."""
    n = len(sa)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    left, right = sa[:-1], sa[1:]
    lcp = np.zeros(n - 1, dtype=np.int64)
    # Greedy from the largest power of two down: the LCP's binary digits, one per round.
    for k in range(len(tables) - 1, -1, -1):
        a, b = left + lcp, right + lcp
        idx = np.nonzero((a < n) & (b < n))[0]
        same = tables[k][a[idx]] == tables[k][b[idx]]
        lcp[idx[same]] += 1 << k
    return lcp


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and (exclusive) ends of the runs of True in ``mask``."""
    edges = np.diff(np.concatenate(([0], mask.view(np.int8), [0])))
    return np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]


def _spans(sa: np.ndarray, lcp: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Groups of suffixes sharing a prefix of ``length``: their SA ranges and position spread.

    A run of lcp >= length over lcp[s:e] joins suffixes sa[s..e]; these are all the
    occurrences of one substring of that length. Returns (first SA index, last SA index,
    max position - min position) per group.
    """
    starts, ends = _runs(lcp >= length)
    if len(starts) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    padded = np.concatenate((sa, [0]))
    bounds = np.empty(2 * len(starts), dtype=np.int64)
    bounds[0::2], bounds[1::2] = starts, ends + 1
    spread = np.maximum.reduceat(padded, bounds)[0::2] - np.minimum.reduceat(padded, bounds)[0::2]
    return starts, ends, spread


def _count_non_overlapping(positions: np.ndarray, length: int) -> int:
    """Occurrences counted left to right, skipping any that overlaps the previous (as str.count)."""
    count, i = 0, 0
    while i < len(positions):
        count += 1
        i = int(np.searchsorted(positions, positions[i] + length, side="left"))
    return count


@dataclass(frozen=True)
class Repeat:
    """The longest repeated substring: ``text[start:start + length]``, occurring ``count`` times.

    ``count`` counts non-overlapping occurrences, left to right (what ``str.count`` gives),
    so ``length * count <= len(text)``.
    """

    start: int
    length: int
    count: int


def longest_repeat(text: str) -> Repeat:
    """The longest substring occurring at least twice without overlapping itself.

    Of several with that length, the one with the most non-overlapping occurrences, then the
    one occurring first. Texts with no repeated character give ``Repeat(0, 0, 0)``.
    """
    n = len(text)
    if n < 2:
        return Repeat(0, 0, 0)
    sa, tables = suffix_array(text)
    lcp = lcp_array(sa, tables)
    del tables  # the rank tables are the largest arrays; free them before the search

    def feasible(length: int) -> bool:
        _, _, spread = _spans(sa, lcp, length)
        return bool((spread >= length).any())

    lo, hi = 0, min(int(lcp.max()), n // 2)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if feasible(mid):
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return Repeat(0, 0, 0)

    starts, ends, spread = _spans(sa, lcp, lo)
    best: Repeat | None = None
    for s, e in zip(starts[spread >= lo], ends[spread >= lo]):
        positions = np.sort(sa[s : e + 1])
        candidate = Repeat(int(positions[0]), lo, _count_non_overlapping(positions, lo))
        if best is None or (candidate.count, -candidate.start) > (best.count, -best.start):
            best = candidate
    assert best is not None  # feasible(lo) guarantees a group
    return best
