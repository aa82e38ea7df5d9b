"""Inline SVG charts for the HTML reports, drawn by Sonar itself (no script, no library).

Three kinds, each a function that returns SVG markup ready to be inserted in a page:

- :func:`metric_bars_svg`: one horizontal bar per model for a metric, with the threshold as
  a dashed vertical line. A longer bar is always a better value: for a lower-is-better metric
  the axis runs from the worst value (left) to the best (right), and the axis says which way
  is better. A bar is green on the right side of the threshold, red on the wrong side, and
  blue (neither) when the metric has no threshold.
- :func:`pass_fail_svg`: one stacked bar per model of a pass/fail evaluator's row counts
  (pass, fail, could not check), with the threshold share as a dashed line.
- :func:`.tradeoff_chart.tradeoff_svg`: quality against mean cost and against mean time per
  answer, one panel each, with each panel's Pareto front joined by a line.

Every text that may come from a dataset (model names above all) is escaped here, and model
names are cut to :data:`LABEL_CHARS` characters (the full name stays in the bar's tooltip).
Each chart carries ``role="img"``, an ``aria-label``, a ``<title>`` and a ``<desc>`` that
says in words what the bars show; the pages put a table beside each chart as well.

Geometry, in SVG user units (CSS pixels at 100 %), for tests to check by hand: the label
column is :data:`LABEL_W` wide, the plot :data:`PLOT_W`, the value column :data:`VALUE_W`.
Bar *i* (from 0) has ``y = TOP + i * (BAR_H + BAR_GAP)`` and starts at ``x = LABEL_W``; it is
``PLOT_W * (value - lo) / (hi - lo)`` wide for a higher-is-better metric and
``PLOT_W * (hi - value) / (hi - lo)`` for a lower-is-better one, clamped to the plot. The
threshold line is at ``x = LABEL_W`` plus the threshold's width. [lo, hi] is the metric's
declared range; an unbounded end holds every value shown, and an unbounded *worse* end lies
:data:`WORSE_HEADROOM` of the span beyond the worst value, so the worst model keeps a bar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Mapping, Sequence

from markupsafe import Markup

from .svg_text import FAIL, GRID, INK, LABEL_CHARS, MUTED, NEUTRAL, OTHER, PASS, fmt_value, number, short_label
from .svg_text import svg_root as _root
from .svg_text import svg_text as _text
from .tradeoff_chart import quality_floor, tradeoff_svg

__all__ = [
    "Bar",
    "bar_layout",
    "metric_bars_svg",
    "pass_fail_svg",
    "tradeoff_svg",
    "number",
    "quality_floor",
    "short_label",
    "LABEL_CHARS",
]

LABEL_W = 160
PLOT_W = 240
VALUE_W = 90
BAR_H = 18
BAR_GAP = 8
TOP = 8
AXIS_H = 30
#: An unbounded worse end of the axis lies this share of the span beyond the worst value.
WORSE_HEADROOM = 0.1


@dataclass(frozen=True)
class Bar:
    """One bar's rectangle; ``width`` is 0 for a missing value."""

    x: float
    y: float
    width: float
    height: float


def _range(values: Sequence[float | None], threshold: float | None, value_range: Sequence[float | None],
           higher_is_better: bool = True) -> tuple[float, float]:
    """The metric's declared range, or, where an end is not finite, one that holds every value.

    An unbounded end comes as an infinity, or as None where the range was read back from JSON.
    An unbounded worse end (perplexity's top) lies :data:`WORSE_HEADROOM` of the span beyond the
    worst value, so that the worst model's bar is short but still drawn.
    """
    lo = -math.inf if value_range[0] is None else float(value_range[0])
    hi = math.inf if value_range[1] is None else float(value_range[1])
    open_lo, open_hi = not math.isfinite(lo), not math.isfinite(hi)
    seen = [v for v in values if v is not None] + ([threshold] if threshold is not None else [])
    if open_lo:
        lo = min(seen + [0.0])
    if open_hi:
        hi = max(seen + [lo + 1.0])
    if hi <= lo:
        hi = lo + 1.0
    if open_hi and not higher_is_better:
        hi += WORSE_HEADROOM * (hi - lo)
    elif open_lo and higher_is_better and lo < 0:
        lo -= WORSE_HEADROOM * (hi - lo)
    return lo, hi


def _x(value: float, lo: float, hi: float, higher_is_better: bool = True) -> float:
    """Position of ``value`` along the plot, clamped to it: the better, the further right."""
    share = (value - lo) / (hi - lo) if higher_is_better else (hi - value) / (hi - lo)
    return LABEL_W + PLOT_W * min(1.0, max(0.0, share))


def bar_layout(values: Sequence[float | None], value_range: Sequence[float], threshold: float | None = None,
               higher_is_better: bool = True) -> tuple[list[Bar], float | None, float]:
    """Bars for ``values`` (in order), the threshold line's x (None without one), the height.

    The better the value, the longer its bar, whichever way the metric runs."""
    lo, hi = _range(values, threshold, value_range, higher_is_better)
    bars = []
    for i, value in enumerate(values):
        y = TOP + i * (BAR_H + BAR_GAP)
        width = 0.0 if value is None else _x(value, lo, hi, higher_is_better) - LABEL_W
        bars.append(Bar(LABEL_W, y, width, BAR_H))
    threshold_x = None if threshold is None else _x(threshold, lo, hi, higher_is_better)
    height = TOP + len(values) * (BAR_H + BAR_GAP) - BAR_GAP + AXIS_H
    return bars, threshold_x, height


def _axis(bottom: float, left_end: float, right_end: float, threshold_x: float | None, threshold_label: str,
          direction: str = "") -> list[str]:
    """The axis line, its two end values, the threshold's label and, left of the axis, which way is better."""
    parts = [f'<line x1="{LABEL_W}" y1="{number(bottom)}" x2="{LABEL_W + PLOT_W}" y2="{number(bottom)}" '
             f'stroke="{GRID}"/>',
             _text(LABEL_W, bottom + 14, format(left_end, "g"), anchor="start", cls="tick", fill=MUTED),
             _text(LABEL_W + PLOT_W, bottom + 14, format(right_end, "g"), anchor="end", cls="tick", fill=MUTED)]
    if direction:
        parts.append(_text(LABEL_W - 6, bottom + 14, direction, anchor="end", cls="tick direction", fill=MUTED))
    if threshold_x is not None:
        parts.append(_text(threshold_x, bottom + 26, threshold_label, anchor="middle", cls="tick", fill=INK))
    return parts


def _error_bar(x1: float, x2: float, y: float, label: str) -> str:
    """An interval as a horizontal whisker with end caps, centred on a bar (``y`` its middle)."""
    return (f'<g class="ci"><title>{escape(label)}</title>'
            f'<line x1="{number(x1)}" y1="{number(y)}" x2="{number(x2)}" y2="{number(y)}" stroke="{INK}" stroke-width="1.5"/>'
            f'<line x1="{number(x1)}" y1="{number(y - 4)}" x2="{number(x1)}" y2="{number(y + 4)}" stroke="{INK}" stroke-width="1.5"/>'
            f'<line x1="{number(x2)}" y1="{number(y - 4)}" x2="{number(x2)}" y2="{number(y + 4)}" stroke="{INK}" stroke-width="1.5"/></g>')


def metric_bars_svg(title: str, models: Sequence[str], values: Sequence[float | None], *,
                    threshold: float | None, value_range: Sequence[float], fails: Sequence[bool],
                    higher_is_better: bool = True, leader: str | None = None,
                    intervals: Sequence[tuple[float, float] | None] | None = None) -> Markup:
    """Horizontal bars of one metric per model: the longer, the better; coloured by the side of the threshold.

    Args:
        title: what the chart shows (evaluator and metric); escaped.
        models: model names, one per bar, top to bottom; escaped.
        values: the metric per model (None: no value, no bar).
        threshold: the threshold in force, drawn as a dashed line; None for none (the bars are
            then blue: there is no side of a threshold to be on).
        value_range: the metric's declared [lo, hi]; bars are drawn on it.
        fails: per model, whether its value is on the wrong side of the threshold, as the findings
            concluded (:attr:`~sonar_core.findings.types.Leaderboard.fails_by_metric`); the chart only colours it.
        higher_is_better: which way the metric runs. For a lower-is-better metric the axis runs
            from ``hi`` (left) to ``lo`` (right), so the lowest value has the longest bar.
        leader: a model to mark with a star.
        intervals: per model, the (low, high) interval of its value, drawn as an error bar across
            the bar's middle from ``x(low)`` to ``x(high)``; None (or a None entry) for none.
    """
    intervals = list(intervals) if intervals is not None else [None] * len(values)
    lo, hi = _range(values, threshold, value_range, higher_is_better)
    bars, threshold_x, height = bar_layout(values, value_range, threshold, higher_is_better)
    width = LABEL_W + PLOT_W + VALUE_W
    better = "higher" if higher_is_better else "lower"
    words = []
    for model, value, interval, failing in zip(models, values, intervals, fails, strict=True):
        if value is None:
            words.append(f"{model}: no value")
            continue
        side = "" if threshold is None else (" (fails the threshold)" if failing else " (meets the threshold)")
        between = "" if interval is None else f", interval {interval[0]:.4f} to {interval[1]:.4f}"
        words.append(f"{model}: {value:.4f}{between}{side}")
    desc = (f"{better.capitalize()} is better" + (f"; threshold {threshold:g}" if threshold is not None else "")
            + ". " + "; ".join(words) + ".")
    if not higher_is_better:
        desc += f" The longer the bar, the lower (better) the value: the axis runs from {hi:g} (left) to {lo:g} (right)."
    parts = [_root(width, height, title, desc, "bars")]
    plot_bottom = height - AXIS_H
    for model, value, bar, failing in zip(models, values, bars, fails):
        label = short_label(model) + (" ★" if model == leader else "")
        parts.append(_text(LABEL_W - 6, bar.y + BAR_H / 2 + 4, label, anchor="end", cls="label"))
        if value is not None:
            status, colour = ("neutral", NEUTRAL) if threshold is None else ("fail", FAIL) if failing else ("pass", PASS)
            parts.append(f'<rect class="bar {status}" x="{number(bar.x)}" y="{number(bar.y)}" '
                         f'width="{number(bar.width)}" height="{number(bar.height)}" fill="{colour}">'
                         f"<title>{escape(f'{model}: {value:.4f}')}</title></rect>")
        parts.append(_text(LABEL_W + PLOT_W + 6, bar.y + BAR_H / 2 + 4, fmt_value(value), cls="value"))
    for model, value, interval, bar in zip(models, values, intervals, bars):
        if value is not None and interval is not None:
            parts.append(_error_bar(_x(interval[0], lo, hi, higher_is_better), _x(interval[1], lo, hi, higher_is_better),
                                    bar.y + BAR_H / 2, f"{model}: interval {interval[0]:.4f} to {interval[1]:.4f}"))
    ends = (lo, hi) if higher_is_better else (hi, lo)
    parts += _axis(plot_bottom, *ends, threshold_x, f"threshold {threshold:g}" if threshold is not None else "",
                   f"{better} is better →")
    if threshold_x is not None:
        parts.append(f'<line class="threshold" x1="{number(threshold_x)}" y1="{TOP - 4}" x2="{number(threshold_x)}" '
                     f'y2="{number(plot_bottom + 4)}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="4 3"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


def pass_fail_svg(title: str, models: Sequence[str], counts: Sequence[Mapping[str, int]], *,
                  threshold_share: float | None = None, leader: str | None = None,
                  intervals: Sequence[tuple[float, float] | None] | None = None) -> Markup:
    """Stacked bars of pass / fail / not-checked row counts per model.

    Args:
        counts: per model, ``pass``, ``fail`` and ``parse_failure`` row counts (missing = 0).
        threshold_share: the share of passing rows a model must reach (the threshold of a
            pass metric), drawn as a dashed line; None for none.
        intervals: per model, the (low, high) interval of its pass rate, drawn as an error bar
            across the bar from ``LABEL_W + PLOT_W * low`` to ``LABEL_W + PLOT_W * high``.

    Each bar spans the plot; its green part is the passing share, then red (failing) and
    grey (could not be checked).
    """
    width = LABEL_W + PLOT_W + VALUE_W
    height = TOP + len(models) * (BAR_H + BAR_GAP) - BAR_GAP + AXIS_H
    plot_bottom = height - AXIS_H
    words = []
    parts: list[str] = []
    whiskers: list[str] = []
    intervals = list(intervals) if intervals is not None else [None] * len(models)
    for i, (model, count, interval) in enumerate(zip(models, counts, intervals)):
        y = TOP + i * (BAR_H + BAR_GAP)
        passed, failed, other = (int(count.get(k) or 0) for k in ("pass", "fail", "parse_failure"))
        total = passed + failed + other
        words.append(f"{model}: {passed} of {total} rows pass, {failed} fail"
                     + (f", {other} could not be checked" if other else "")
                     + (f" (pass rate interval {interval[0]:.4f} to {interval[1]:.4f})" if interval else ""))
        if interval is not None:
            whiskers.append(_error_bar(LABEL_W + PLOT_W * interval[0], LABEL_W + PLOT_W * interval[1], y + BAR_H / 2,
                                       f"{model}: pass rate interval {interval[0]:.4f} to {interval[1]:.4f}"))
        label = short_label(model) + (" ★" if model == leader else "")
        parts.append(_text(LABEL_W - 6, y + BAR_H / 2 + 4, label, anchor="end", cls="label"))
        x = float(LABEL_W)
        for name, n, colour in (("pass", passed, PASS), ("fail", failed, FAIL), ("other", other, OTHER)):
            if not n:
                continue
            w = PLOT_W * n / total
            parts.append(f'<rect class="seg {name}" x="{number(x)}" y="{number(y)}" width="{number(w)}" '
                         f'height="{BAR_H}" fill="{colour}"><title>{escape(f"{model}: {n} {name}")}</title></rect>')
            x += w
        parts.append(_text(LABEL_W + PLOT_W + 6, y + BAR_H / 2 + 4, f"{passed}/{total} pass", cls="value"))
    threshold_x = None if threshold_share is None else LABEL_W + PLOT_W * min(1.0, max(0.0, threshold_share))
    desc = ("Rows per model: green passes, red fails, grey could not be checked"
            + (f"; a model passes the evaluator when at least {threshold_share:g} of its rows pass"
               if threshold_share is not None else "") + ". " + "; ".join(words) + ".")
    head = _root(width, height, title, desc, "passfail")
    axis = _axis(plot_bottom, 0.0, 1.0, threshold_x,
                 f"threshold {threshold_share:g}" if threshold_share is not None else "")
    line = []
    if threshold_x is not None:
        line.append(f'<line class="threshold" x1="{number(threshold_x)}" y1="{TOP - 4}" x2="{number(threshold_x)}" '
                    f'y2="{number(plot_bottom + 4)}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="4 3"/>')
    return Markup(head + "".join(parts + whiskers + axis + line) + "</svg>")
