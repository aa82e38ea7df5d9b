"""How far to believe an aggregate: intervals and paired tests, in plain Python and numpy.

Everything a reader sees as "model A scores 0.82" should also say how sure that is. This module
holds the arithmetic, with no knowledge of evaluators or artifacts:

- ``wilson_interval``: a pass rate's (any 0/1 metric's) score interval, closed form;
- ``clopper_pearson_interval``: the exact binomial interval (ModelBench's hazard scores);
- ``bootstrap_mean_interval``: a percentile bootstrap of a mean, resampling test cases, seeded;
- ``mcnemar_exact``: the exact McNemar test for paired pass/fail outcomes;
- ``paired_permutation_test``: a sign-flip permutation test for paired scores;
- ``holm_adjust``: Holm's step-down correction over one family of p-values.

No scipy: the base install does not have it. The incomplete beta function below (a continued
fraction, as in Numerical Recipes' ``betacf``) gives binomial tails for large counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

import numpy as np

__all__ = [
    "Interval",
    "PairedTest",
    "z_value",
    "wilson_interval",
    "clopper_pearson_interval",
    "bootstrap_mean_interval",
    "bootstrap_mean_intervals",
    "mcnemar_exact",
    "paired_permutation_test",
    "holm_adjust",
    "is_binary",
    "binomial_cdf",
    "mean_interval",
    "paired_test",
]

#: Resampling rows in chunks keeps memory flat (chunk x n indices at a time) at 200,000 rows.
_CHUNK_CELLS = 4_000_000
#: Up to this many nonzero paired differences, the permutation test enumerates all sign flips.
_EXACT_PERMUTATION_MAX = 16
#: Above this many nonzero paired differences, the permutation test uses the normal approximation
#: of its sign-flip distribution (exact mean 0 and variance sum(d^2)) instead of random patterns.
_NORMAL_PERMUTATION_FROM = 10_000
#: bootstrap_mean_intervals multiplies draw counts by the values from this many columns on.
_COUNTS_FROM_COLUMNS = 5


@dataclass(frozen=True)
class Interval:
    """A two-sided interval around an aggregate, with the sample size behind it."""

    low: float
    high: float
    n: int
    #: "wilson", "clopper-pearson" or "bootstrap".
    method: str
    confidence: float = 0.95


@dataclass(frozen=True)
class PairedTest:
    """The outcome of a paired test between two models (or two runs) over shared test cases."""

    #: "mcnemar-exact" or "paired-permutation".
    test: str
    p_value: float
    #: Test cases both sides answered (the pairs the test saw).
    n: int
    #: Mean of A minus mean of B over those pairs.
    delta: float
    #: McNemar's discordant counts: A passed and B failed (b), A failed and B passed (c).
    b: int | None = None
    c: int | None = None


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (1.959963... for 0.95)."""
    _check_confidence(confidence)
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson's score interval for ``successes`` out of ``n``; None when ``n`` is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = z_value(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half), n, "wilson", confidence)


def clopper_pearson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval | None:
    """The exact (Clopper-Pearson) binomial interval; None when ``n`` is 0.

    The bounds are the Beta quantiles B(a/2; k, n-k+1) and B(1-a/2; k+1, n-k), found by bisection
    on the regularized incomplete beta function (60 halvings: far below float precision of a score).
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    _check_confidence(confidence)
    alpha = 1.0 - confidence
    k = successes
    low = 0.0 if k == 0 else _beta_quantile(alpha / 2.0, k, n - k + 1)
    high = 1.0 if k == n else _beta_quantile(1.0 - alpha / 2.0, k + 1, n - k)
    return Interval(low, high, n, "clopper-pearson", confidence)


def bootstrap_mean_interval(values: Sequence[float], confidence: float = 0.95, resamples: int = 2000,
                            seed: int = 0) -> Interval | None:
    """Percentile bootstrap interval of the mean, resampling the values (test cases) with replacement.

    The draws are, exactly: ``rng = numpy.random.default_rng(seed)``, then for each chunk of
    replicates ``rng.integers(0, n, size=(chunk, n))`` (chunk = resamples when resamples * n is at
    most 4,000,000 cells), each replicate's mean, and ``numpy.quantile`` (linear) at a/2 and 1 - a/2.
    None when there are no values; a single value (or all equal) gives a zero-width interval.
    """
    return bootstrap_mean_intervals([values], confidence, resamples, seed)[0]


def bootstrap_mean_intervals(columns: Sequence[Sequence[float]], confidence: float = 0.95, resamples: int = 2000,
                             seed: int = 0) -> list[Interval | None]:
    """:func:`bootstrap_mean_interval` of several columns of one length n, from one set of draws.

    Every column gets the interval it would get alone (the same seed gives the same resampled
    rows), but the index matrix, the costly part at 200,000 rows, is drawn once for all: one
    model's metrics, or the models that answered the same number of test cases, share it. From
    five columns on, the replicate means are taken as (times each row was drawn) x values / n,
    one matrix product for every column, so they may differ from the gathered means in the last
    bits of a float; with fewer columns they are exactly :func:`bootstrap_mean_interval`'s.
    """
    data = [np.asarray(values, dtype=float) for values in columns]
    if not data:
        return []
    n = int(data[0].size)
    if any(int(column.size) != n for column in data):
        raise ValueError("columns resampled together must have the same length")
    if n == 0:
        return [None] * len(data)
    _check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, _CHUNK_CELLS // n))
    means = np.empty((len(data), resamples), dtype=float)
    # From five columns on, counting how often each row was drawn and multiplying the counts by
    # all columns at once (one matrix product) is cheaper than gathering each column's values.
    stacked = np.stack(data, axis=1) if len(data) >= _COUNTS_FROM_COLUMNS else None
    done = 0
    while done < resamples:
        size = min(chunk, resamples - done)
        idx = rng.integers(0, n, size=(size, n))
        if stacked is not None:
            idx += (np.arange(size) * n)[:, None]
            counts = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
            means[:, done:done + size] = (counts.astype(float) @ stacked).T / n
        else:
            for row, column in enumerate(data):
                means[row, done:done + size] = column[idx].mean(axis=1)
        done += size
    alpha = 1.0 - confidence
    bounds = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)
    return [Interval(float(low), float(high), n, "bootstrap", confidence) for low, high in bounds.T]


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``.

    Under the null each discordant pair is a fair coin: p = min(1, 2 * P(X <= min(b, c))) with
    X ~ Binomial(b + c, 1/2). No discordant pair at all gives p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    m = b + c
    if m == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_cdf(min(b, c), m, 0.5))


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p): an exact sum up to n = 1000, the incomplete beta above."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= 1000:
        return math.fsum(math.comb(n, i) * p ** i * (1.0 - p) ** (n - i) for i in range(k + 1))
    # P(X <= k) = 1 - I_p(k + 1, n - k)
    return 1.0 - _betainc(k + 1, n - k, p)


def paired_permutation_test(a: Sequence[float], b: Sequence[float], resamples: int = 10000,
                            seed: int = 0) -> PairedTest:
    """Two-sided sign-flip permutation test of the mean paired difference ``a - b``.

    Under the null the sign of each difference is a fair coin. With at most 16 nonzero differences
    every sign pattern is enumerated (an exact p); with more than 10,000 the p-value is that of
    the pattern sum's normal approximation, p = erfc(|sum d| / sqrt(2 sum d^2)); otherwise ``resamples`` random patterns are drawn
    (``numpy.random.default_rng(seed)``; per chunk of patterns ``rng.bytes``, unpacked to one bit
    per nonzero difference, 1 meaning +) and p = (1 + hits) / (1 + resamples), so p is never 0.
    A pattern counts as a hit when its |mean| is at least the observed |mean| (within 1e-12).
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired samples must have the same length")
    n = int(x.size)
    if n == 0:
        return PairedTest("paired-permutation", 1.0, 0, 0.0)
    diff = x - y
    observed = abs(float(diff.mean()))
    nonzero = diff[diff != 0.0]
    m = int(nonzero.size)
    if m == 0:
        return PairedTest("paired-permutation", 1.0, n, 0.0)
    tolerance = 1e-12
    if m > _NORMAL_PERMUTATION_FROM:
        # Under the null, sum(s * d) has mean 0 and variance sum(d^2), and with this many terms
        # its distribution is normal to far better than random patterns would resolve it.
        z = abs(float(nonzero.sum())) / math.sqrt(float(np.dot(nonzero, nonzero)))
        p = math.erfc(z / math.sqrt(2.0))
    elif m <= _EXACT_PERMUTATION_MAX:
        patterns = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        sums = np.abs(patterns @ nonzero) / n
        p = float(np.mean(sums >= observed - tolerance))
    else:
        # Signs come as random bits (eight per byte of rng.bytes): at 200,000 pairs this is many
        # times faster than drawing one integer per sign. With bit = 1 for +, sum(s * d) is
        # 2 * (bits @ d) - sum(d).
        rng = np.random.default_rng(seed)
        hits = 0
        chunk = max(1, min(resamples, _CHUNK_CELLS // m))
        width = (m + 7) // 8
        total = float(nonzero.sum())
        done = 0
        while done < resamples:
            size = min(chunk, resamples - done)
            raw = np.frombuffer(rng.bytes(size * width), dtype=np.uint8).reshape(size, width)
            bits = np.unpackbits(raw, axis=1, count=m)
            hits += int(np.count_nonzero(np.abs(2.0 * (bits @ nonzero) - total) / n >= observed - tolerance))
            done += size
        p = (1 + hits) / (1 + resamples)
    return PairedTest("paired-permutation", min(1.0, p), n, float(diff.mean()))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order.

    Sorted ascending, the i-th smallest (0-based) of m becomes max over j <= i of (m - j) * p_(j),
    capped at 1: monotone, and never below the raw p-value.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def is_binary(values: Sequence[float]) -> bool:
    """Whether every value is 0 or 1 (a pass/fail metric: Wilson and McNemar apply)."""
    return all(v == 0.0 or v == 1.0 for v in values)


def mean_interval(values: Sequence[float], confidence: float = 0.95, resamples: int = 2000,
                  seed: int = 0) -> Interval | None:
    """The interval Sonar shows beside a mean: Wilson for 0/1 values, the percentile bootstrap else.

    ``values`` are one model's per-test-case values of one metric, None/NaN already dropped.
    """
    if len(values) == 0:
        return None
    if is_binary(values):
        return wilson_interval(int(sum(values)), len(values), confidence)
    return bootstrap_mean_interval(values, confidence, resamples, seed)


def paired_test(a: Sequence[float], b: Sequence[float], resamples: int = 10000, seed: int = 0) -> PairedTest:
    """The paired test between two sides' values on the same test cases (same order, no None).

    Exact McNemar when both sides are 0/1, a paired permutation test otherwise.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired samples must have the same length")
    if _binary_array(x) and _binary_array(y):
        b_count = int(np.count_nonzero((x == 1.0) & (y == 0.0)))
        c_count = int(np.count_nonzero((x == 0.0) & (y == 1.0)))
        n = int(x.size)
        delta = (b_count - c_count) / n if n else 0.0
        return PairedTest("mcnemar-exact", mcnemar_exact(b_count, c_count), n, float(delta), b_count, c_count)
    return paired_permutation_test(x, y, resamples, seed)


def _binary_array(values: np.ndarray) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


def _check_confidence(confidence: float) -> None:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence level must be between 0 and 1 (exclusive), got {confidence!r}")


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The x in [0, 1] with I_x(a, b) = q, by bisection (I is increasing in x)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if _betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h
