"""The dynamic-programming step alignment on controlled similarity matrices, counted by hand."""

from __future__ import annotations

import numpy as np

from sonar_plugins.semantic.alignment import align_steps

CUTOFF = 0.7


def matrix(n: int, m: int, pairs: dict[tuple[int, int], float], rest: float = 0.1) -> np.ndarray:
    """n context steps x m answer steps, ``rest`` everywhere but the given (i, j) pairs."""
    sims = np.full((n, m), rest)
    for (i, j), value in pairs.items():
        sims[i, j] = value
    return sims


def ops(alignment) -> list[tuple]:
    return [(s.op, s.context_index, s.answer_index) for s in alignment.steps]


def counts(alignment) -> tuple[int, int, int, int]:
    return alignment.edits, alignment.insertions, alignment.deletions, alignment.mismatches


def test_same_steps_in_order_need_no_edit():
    result = align_steps(matrix(3, 3, {(0, 0): 1.0, (1, 1): 0.9, (2, 2): 0.75}), CUTOFF)
    assert ops(result) == [("match", 0, 0), ("match", 1, 1), ("match", 2, 2)]
    assert counts(result) == (0, 0, 0, 0) and result.matches == 3


def test_a_missing_step_is_one_insertion():
    # context A B C D, answer A C D
    result = align_steps(matrix(4, 3, {(0, 0): 0.9, (2, 1): 0.9, (3, 2): 0.9}), CUTOFF)
    assert ops(result) == [("match", 0, 0), ("insertion", 1, None), ("match", 2, 1), ("match", 3, 2)]
    assert counts(result) == (1, 1, 0, 0)


def test_an_extra_step_is_one_deletion():
    # context A B, answer A X B
    result = align_steps(matrix(2, 3, {(0, 0): 0.9, (1, 2): 0.9}), CUTOFF)
    assert ops(result) == [("match", 0, 0), ("deletion", None, 1), ("match", 1, 2)]
    assert counts(result) == (1, 0, 1, 0)


def test_a_different_step_in_place_is_one_mismatch():
    # context A B C, answer A Y C; Y resembles B only a little (0.3)
    result = align_steps(matrix(3, 3, {(0, 0): 0.9, (1, 1): 0.3, (2, 2): 0.9}), CUTOFF)
    assert ops(result) == [("match", 0, 0), ("mismatch", 1, 1), ("match", 2, 2)]
    assert counts(result) == (1, 0, 0, 1)
    assert result.steps[1].similarity == 0.3


def test_swapped_steps_cost_two_edits_and_keep_the_better_match():
    # context A B C, answer B A C. Two mismatches or one deletion + one insertion both cost 2;
    # keeping A-A (0.95) matched beats keeping B-B (0.8) and beats mismatching both.
    result = align_steps(matrix(3, 3, {(0, 1): 0.95, (1, 0): 0.8, (2, 2): 0.9}, rest=0.0), CUTOFF)
    assert ops(result) == [("deletion", None, 0), ("match", 0, 1), ("insertion", 1, None), ("match", 2, 2)]
    assert counts(result) == (2, 1, 1, 0)


def test_hand_counted_mixed_case():
    # context A B C D E, answer A X C E Y: A=A, X in place of B, C=C, D missing, E=E, Y extra.
    result = align_steps(matrix(5, 5, {(0, 0): 0.9, (1, 1): 0.2, (2, 2): 0.85, (4, 3): 0.8}), CUTOFF)
    assert ops(result) == [("match", 0, 0), ("mismatch", 1, 1), ("match", 2, 2), ("insertion", 3, None),
                           ("match", 4, 3), ("deletion", None, 4)]
    assert counts(result) == (3, 1, 1, 1)


def test_similarity_at_the_cutoff_matches():
    assert counts(align_steps(matrix(1, 1, {(0, 0): CUTOFF}), CUTOFF)) == (0, 0, 0, 0)
    assert counts(align_steps(matrix(1, 1, {(0, 0): CUTOFF - 1e-9}), CUTOFF)) == (1, 0, 0, 1)


def test_no_steps_on_one_side():
    assert ops(align_steps(np.zeros((0, 2)), CUTOFF)) == [("deletion", None, 0), ("deletion", None, 1)]
    assert counts(align_steps(np.zeros((3, 0)), CUTOFF)) == (3, 3, 0, 0)
    assert ops(align_steps(np.zeros((0, 0)), CUTOFF)) == []
