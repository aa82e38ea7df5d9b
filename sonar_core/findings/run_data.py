"""A finished run's scores as arrays: what the comparison's statistics read of :mod:`.run_types`.

:func:`value_array` gives one metric's column of an evaluator as a float64 array (NaN where a row
has no value), made once per evaluator and metric; :func:`failing` says which values of a column are
on the wrong side of a metric's threshold, as ``Metric.fails`` does; :func:`span_verdicts` gives each
row of a trace run its score and label, for the annotations written back as spans.
"""

from __future__ import annotations

import numpy as np

from .run_types import EvaluatorData, MetricInfo, RunData, SpanRows

__all__ = ["MetricInfo", "EvaluatorData", "RunData", "failing", "span_verdicts", "value_array"]


def value_array(ev: EvaluatorData, key: str) -> np.ndarray:
    """The values of metric ``key``, one per row, as a float64 array (NaN: no value)."""
    array = ev._arrays.get(key)
    if array is None:
        array = ev._arrays[key] = np.array(ev.values[key], dtype=float)  # None becomes NaN
    return array


def failing(metric: MetricInfo, values: np.ndarray, threshold: float | None = None) -> np.ndarray:
    """Which ``values`` are on the wrong side of the threshold (NaN never is), as Metric.fails."""
    t = metric.threshold if threshold is None else threshold
    if t is None:
        return np.zeros(values.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return values < t if metric.higher_is_better else values > t


def span_verdicts(rows: SpanRows) -> tuple[list[float | None], list[str | None]]:
    """Each row's score on the primary metric (None: no value) and its label: ``pass`` or ``fail`` by the
    side of the threshold the run stored, None without a score or a threshold, and ``not counted`` for
    an untrusted judge's verdict (docs/judges.md)."""
    primary = rows.primary
    values = np.array([np.nan if v is None else v for v in rows.columns[primary.key]], dtype=float)
    fails = failing(primary, values)
    scores: list[float | None] = [None if np.isnan(v) else float(v) for v in values]
    labels: list[str | None] = []
    for n, score in enumerate(scores):
        label = None if score is None or primary.threshold is None else ("fail" if fails[n] else "pass")
        labels.append("not counted" if rows.columns["judge_trust"][n] == "untrusted" else label)
    return scores, labels

