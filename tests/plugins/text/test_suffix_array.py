"""Suffix array, LCP and longest non-overlapping repeat, checked against brute force."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from sonar_plugins.text.suffix_array import Repeat, lcp_array, longest_repeat, suffix_array


def brute_force_repeat(text: str) -> Repeat:
    """Try every length from n/2 down; of the non-overlapping repeats, most frequent then first."""
    for length in range(len(text) // 2, 0, -1):
        occurrences: dict[str, list[int]] = {}
        for i in range(len(text) - length + 1):
            occurrences.setdefault(text[i : i + length], []).append(i)
        candidates = [
            (text.count(sub), -pos[0]) for sub, pos in occurrences.items() if pos[-1] - pos[0] >= length
        ]
        if candidates:
            count, neg_start = max(candidates)
            return Repeat(-neg_start, length, count)
    return Repeat(0, 0, 0)


def test_suffix_array_and_lcp_of_banana():
    sa, tables = suffix_array("banana")
    # Suffixes sorted: a(5) ana(3) anana(1) banana(0) na(4) nana(2).
    assert sa.tolist() == [5, 3, 1, 0, 4, 2]
    # Common prefixes of neighbours: a|ana 1, ana|anana 3, anana|banana 0, banana|na 0, na|nana 2.
    assert lcp_array(sa, tables).tolist() == [1, 3, 0, 0, 2]


def test_empty_and_single_character():
    sa, tables = suffix_array("")
    assert sa.tolist() == [] and lcp_array(sa, tables).tolist() == []
    sa, tables = suffix_array("x")
    assert sa.tolist() == [0] and lcp_array(sa, tables).tolist() == []
    assert longest_repeat("") == Repeat(0, 0, 0) == longest_repeat("x")


@pytest.mark.parametrize("alphabet", ["ab", "abc", "a", "aé😀", "abcd"])
def test_matches_brute_force_on_random_texts(alphabet):
    rng = random.Random(alphabet)
    for _ in range(150):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 28)))
        sa, tables = suffix_array(text)
        assert sa.tolist() == sorted(range(len(text)), key=lambda i: text[i:])
        expected_lcp = [
            len(os.path.commonprefix([text[sa[i] :], text[sa[i + 1] :]])) for i in range(len(text) - 1)
        ]
        assert lcp_array(sa, tables).tolist() == expected_lcp
        repeat = longest_repeat(text)
        assert repeat == brute_force_repeat(text), text
        if repeat.length:
            assert repeat.count == text.count(text[repeat.start : repeat.start + repeat.length])


def test_random_megabyte_text():
    # 1,000,000 random letters: the longest repeat is short, found without quadratic work.
    rng = np.random.default_rng(7)
    text = "".join(np.array(list("abcdefghijklmnopqrstuvwxyz"))[rng.integers(0, 26, 1_000_000)])
    repeat = longest_repeat(text)
    piece = text[repeat.start : repeat.start + repeat.length]
    assert repeat.count == text.count(piece) >= 2
    # No longer repeat: the (length + 1)-grams of the text are all distinct (a set is linear).
    longer = {text[i : i + repeat.length + 1] for i in range(len(text) - repeat.length)}
    assert len(longer) == len(text) - repeat.length
