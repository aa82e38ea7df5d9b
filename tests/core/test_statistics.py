"""The interval and test arithmetic, against figures computed by hand or from closed forms."""

import math

import numpy as np
import pytest

from sonar_core.findings.statistics import (
    binomial_cdf,
    bootstrap_mean_interval,
    bootstrap_mean_intervals,
    clopper_pearson_interval,
    holm_adjust,
    is_binary,
    mean_interval,
    paired_test,
    mcnemar_exact,
    paired_permutation_test,
    wilson_interval,
    z_value,
)


def test_wilson_matches_the_closed_form():
    # 8 of 10: p = 0.8, z = 1.959964, z^2/n = 0.3841459
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    got = wilson_interval(8, 10)
    assert got.low == pytest.approx(centre - half, abs=1e-12)
    assert got.high == pytest.approx(centre + half, abs=1e-12)
    assert (round(got.low, 4), round(got.high, 4)) == (0.4902, 0.9433)
    assert (got.n, got.method) == (10, "wilson")


def test_wilson_edges_and_empty():
    assert wilson_interval(0, 0) is None
    zero = wilson_interval(0, 5)
    assert zero.low == 0.0 and zero.high == pytest.approx(z_value(0.95) ** 2 / (5 + z_value(0.95) ** 2))
    with pytest.raises(ValueError, match="confidence level must be between 0 and 1"):
        wilson_interval(1, 2, confidence=1.5)


def test_clopper_pearson_closed_forms():
    # k = 0: upper = 1 - (a/2)^(1/n); k = n: lower = (a/2)^(1/n)
    none = clopper_pearson_interval(0, 10)
    assert none.low == 0.0 and none.high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-10)
    every = clopper_pearson_interval(10, 10)
    assert every.high == 1.0 and every.low == pytest.approx(0.025 ** (1 / 10), abs=1e-10)
    # k = 1 of n = 2: lower solves 1 - (1-p)^2 = 0.025, upper solves p^2 = 0.975
    one = clopper_pearson_interval(1, 2)
    assert one.low == pytest.approx(1 - math.sqrt(0.975), abs=1e-10)
    assert one.high == pytest.approx(math.sqrt(0.975), abs=1e-10)


def test_binomial_cdf_small_and_large_agree():
    assert binomial_cdf(1, 6, 0.5) == pytest.approx(7 / 64)
    # the incomplete beta path (n > 1000) against the exact sum done here with integers
    n, k = 1200, 580
    exact = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    assert binomial_cdf(k, n, 0.5) == pytest.approx(exact, rel=1e-9)


def test_mcnemar_exact_by_hand():
    # b = 5, c = 1: P(X <= 1), X ~ Bin(6, 1/2) = 7/64; two-sided 14/64
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # b = 0, c = 6: 2 * (1/64)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)


def test_holm_on_known_p_values():
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm_adjust([]) == []


def test_paired_permutation_enumerates_small_samples():
    # differences 1, 2, 3: of the 8 sign patterns only +++ and --- reach |sum| = 6
    result = paired_permutation_test([2, 3, 4], [1, 1, 1])
    assert result.p_value == pytest.approx(2 / 8)
    assert (result.n, result.delta, result.test) == (3, 2.0, "paired-permutation")
    same = paired_permutation_test([1, 2], [1, 2])
    assert (same.p_value, same.delta) == (1.0, 0.0)


def test_paired_permutation_sampled_for_many_pairs():
    rng = np.random.default_rng(3)
    a = rng.random(40) + 0.5
    b = rng.random(40)
    result = paired_permutation_test(a, b, resamples=999, seed=1)
    # a clear shift: no random sign pattern reaches it, so p = 1 / (1 + 999)
    assert result.p_value == pytest.approx(1 / 1000)


def test_bootstrap_against_an_independent_numpy_computation():
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.05, 0.6]
    got = bootstrap_mean_interval(values, resamples=500, seed=7)
    data = np.array(values)
    # recomputed from scratch: one draw of the whole (500, n) index matrix
    rng = np.random.default_rng(7)
    idx = rng.integers(0, len(values), size=(500, len(values)))
    means = data[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    assert (got.low, got.high, got.n, got.method) == (low, high, 7, "bootstrap")
    assert bootstrap_mean_interval([], seed=1) is None
    flat = bootstrap_mean_interval([0.5, 0.5, 0.5])
    assert (flat.low, flat.high) == (0.5, 0.5)


def test_is_binary():
    assert is_binary([0.0, 1.0, 1])
    assert not is_binary([0.0, 0.5])


def test_mean_interval_and_paired_test_pick_the_method_by_the_values():
    assert mean_interval([1, 0, 1, 1]).method == "wilson"
    assert mean_interval([0.2, 0.9]).method == "bootstrap"
    assert mean_interval([]) is None
    # pass/fail pairs: A passes where B fails on rows 0-4, the reverse on row 5 -> b = 5, c = 1
    a = [1, 1, 1, 1, 1, 0, 1]
    b = [0, 0, 0, 0, 0, 1, 1]
    test = paired_test(a, b)
    assert (test.test, test.b, test.c, test.n) == ("mcnemar-exact", 5, 1, 7)
    assert test.p_value == pytest.approx(14 / 64)
    assert test.delta == pytest.approx(4 / 7)
    assert paired_test([0.5, 0.7], [0.1, 0.2]).test == "paired-permutation"


def test_shared_bootstrap_draws_give_each_column_its_own_interval():
    rng = np.random.default_rng(5)
    columns = [rng.random(30) for _ in range(6)]
    alone = [bootstrap_mean_interval(c, resamples=300, seed=2) for c in columns]
    # Two columns: the same gathered means, so exactly the same bounds.
    assert bootstrap_mean_intervals(columns[:2], resamples=300, seed=2) == alone[:2]
    # Six columns: counts x values, the same draws; equal up to float rounding.
    together = bootstrap_mean_intervals(columns, resamples=300, seed=2)
    for got, want in zip(together, alone):
        assert (got.low, got.high, got.n) == (pytest.approx(want.low, abs=1e-12), pytest.approx(want.high, abs=1e-12), 30)
    with pytest.raises(ValueError, match="same length"):
        bootstrap_mean_intervals([[1.0, 2.0], [1.0]])


def test_paired_permutation_normal_approximation_above_ten_thousand_differences():
    # 10,001 differences: 5,050 of +2 and 4,951 of -2: sum 198, sum of squares 40,004, so
    # z = 198 / sqrt(40004) = 0.98995 and p = erfc(z / sqrt(2)) = 0.3222, by the closed form.
    a = [2.0] * 5050 + [0.0] * 4951
    b = [0.0] * 5050 + [2.0] * 4951
    result = paired_permutation_test(a, b)
    assert result.p_value == pytest.approx(math.erfc(198 / math.sqrt(2 * 40004)), rel=1e-12)
    assert round(result.p_value, 4) == 0.3222
    assert result.n == 10001 and result.delta == pytest.approx(198 / 10001)
