"""The rows two evaluators share (sonar_core/findings/comparison_rows.py): pairs, per-model pairs, one-side
test cases and the memo that reuses a pairing for evaluators with the same row keys. Every expected index
is worked out by hand from the keys below."""

from __future__ import annotations

import numpy as np

from sonar_core.findings.comparison_rows import PairingMemo, model_codes
from sonar_core.findings.run_types import EvaluatorData


def _ev(cases: list[str], models: list[str]) -> EvaluatorData:
    return EvaluatorData(label="e", evaluator_id="e", parameters={}, folder="f", metrics=[],
                         test_case_keys=cases, model_keys=models)


def test_rows_pair_on_test_case_and_model_in_a_order_and_a_repeated_b_key_pairs_with_its_last_row():
    # A: rows 0..4; B holds (t2, m1) twice (rows 1 and 3) and (t9, m1), which A lacks.
    a = _ev(["t1", "t1", "t2", "t3", "t2"], ["m1", "m2", "m1", "m1", "m2"])
    b = _ev(["t2", "t2", "t1", "t2", "t9"], ["m2", "m1", "m2", "m1", "m1"])
    pairs = PairingMemo(["m1", "m2"]).pairs(a, b)
    # A0 (t1,m1): none. A1 (t1,m2): B2. A2 (t2,m1): B3 (the last of B1, B3). A3 (t3,m1): none. A4 (t2,m2): B0.
    assert pairs.rows_a.tolist() == [1, 2, 4]
    assert pairs.rows_b.tolist() == [2, 3, 0]
    assert {m: (ra.tolist(), rb.tolist()) for m, (ra, rb) in pairs.by_model.items()} == {
        "m1": ([2], [3]), "m2": ([1, 4], [2, 0])}
    assert (pairs.rows_only_a, pairs.rows_only_b) == (2, 1)  # A0 and A3; B's 4 distinct keys less the 3 paired
    assert pairs.test_cases_only_a == ("t3",)
    assert pairs.test_cases_only_b == ("t9",)
    assert pairs.cases_a[pairs.rows_a].tolist() == ["t1", "t2", "t2"]


def test_a_model_not_compared_has_no_pairs_and_code_minus_one():
    a = _ev(["t1", "t1"], ["m1", "m3"])
    b = _ev(["t1", "t1"], ["m1", "m3"])
    pairs = PairingMemo(["m1"]).pairs(a, b)
    assert pairs.rows_a.tolist() == [0, 1]  # both rows pair; only m1's are compared
    assert list(pairs.by_model) == ["m1"] and pairs.by_model["m1"][0].tolist() == [0]
    assert model_codes(["m3", "m1", "m2"], ["m1", "m2"]).tolist() == [-1, 0, 1]


def test_nothing_in_common_and_empty_sides_pair_nothing():
    a, b = _ev(["t1"], ["m1"]), _ev(["t2"], ["m1"])
    pairs = PairingMemo(["m1"]).pairs(a, b)
    assert pairs.rows_a.size == 0 and (pairs.rows_only_a, pairs.rows_only_b) == (1, 1)
    empty = PairingMemo(["m1"]).pairs(_ev([], []), b)
    assert empty.rows_a.size == 0 and (empty.rows_only_a, empty.rows_only_b) == (0, 1)
    assert PairingMemo(["m1"]).pairs(a, _ev([], [])).rows_only_b == 0


def test_the_memo_reuses_a_pairing_for_equal_key_lists_and_pairs_again_for_others():
    memo = PairingMemo(["m1"])
    first = memo.pairs(_ev(["t1", "t2"], ["m1", "m1"]), _ev(["t2", "t1"], ["m1", "m1"]))
    again = memo.pairs(_ev(["t1", "t2"], ["m1", "m1"]), _ev(["t2", "t1"], ["m1", "m1"]))  # equal, not the same lists
    assert again is first and first.rows_b.tolist() == [1, 0]
    other = memo.pairs(_ev(["t1", "t2"], ["m1", "m1"]), _ev(["t1"], ["m1"]))
    assert other is not first and other.rows_a.tolist() == [0] and other.rows_only_a == 1
    assert memo.pairs(_ev(["t1", "t2"], ["m1", "m1"]), _ev(["t2", "t1"], ["m1", "m1"])) is first  # still kept
    codes = memo.codes(["m1", "m2"])
    assert memo.codes(["m1", "m2"]) is codes and np.array_equal(codes, [0, -1])


def test_pairs_equal_a_dictionary_of_b_keys_on_random_keys_with_repeats():
    rng = np.random.default_rng(5)
    for _ in range(20):
        a = _ev([f"t{x}" for x in rng.integers(0, 30, 200)], [f"m{x}" for x in rng.integers(0, 4, 200)])
        b = _ev([f"t{x}" for x in rng.integers(0, 40, 150)], [f"m{x}" for x in rng.integers(0, 5, 150)])
        rows_of_b = {key: i for i, key in enumerate(zip(b.test_case_keys, b.model_keys))}  # the last row wins
        keys_a = zip(a.test_case_keys, a.model_keys)
        expected = [(i, rows_of_b[key]) for i, key in enumerate(keys_a) if key in rows_of_b]
        pairs = PairingMemo(["m0", "m1", "m2", "m3"]).pairs(a, b)
        assert list(zip(pairs.rows_a.tolist(), pairs.rows_b.tolist())) == expected
        assert pairs.rows_only_b == len(rows_of_b) - len(expected)
