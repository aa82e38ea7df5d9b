"""Inline SVG charts for the HTML reports, drawn by Sonar itself (no script, no library).

Three kinds, each a function that returns SVG markup ready to be inserted in a page:

- :func:`metric_bars_svg`: one horizontal bar per model for a metric, with the threshold as
  a dashed vertical line; a bar is green on the right side of the threshold, red otherwise.
- :func:`pass_fail_svg`: one stacked bar per model of a pass/fail evaluator's row counts
  (pass, fail, could not check), with the threshold share as a dashed line.
- :func:`tradeoff_svg`: quality against mean cost and against mean time per answer, one
  panel each, with each panel's Pareto front joined by a line.

Every text that may come from a dataset (model names above all) is escaped here, and model
names are cut to :data:`LABEL_CHARS` characters (the full name stays in the bar's tooltip).
Each chart carries ``role="img"``, an ``aria-label``, a ``<title>`` and a ``<desc>`` that
says in words what the bars show; the pages put a table beside each chart as well.

Geometry, in SVG user units (CSS pixels at 100 %), for tests to check by hand:

- bars: the label column is :data:`LABEL_W` wide, the plot :data:`PLOT_W`, the value column
  :data:`VALUE_W`. Bar *i* (from 0) has ``y = TOP + i * (BAR_H + BAR_GAP)``, starts at
  ``x = LABEL_W`` and is ``PLOT_W * (value - lo) / (hi - lo)`` wide, clamped to the plot.
  The threshold line is at ``x = LABEL_W + PLOT_W * (threshold - lo) / (hi - lo)``.
- scatter panels are :data:`PANEL_W` x :data:`PANEL_H`, the second one :data:`PANEL_GAP`
  to the right of the first; inside a panel the plot spans ``[PAD_L, PANEL_W - PAD_R]``
  across and ``[PAD_T, PANEL_H - PAD_B]`` down; x runs from 0 to :data:`X_HEADROOM` times
  the largest value shown, quality from :func:`quality_floor` (bottom) to 1 (top).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Mapping, Sequence

from markupsafe import Markup

__all__ = [
    "Bar",
    "bar_layout",
    "metric_bars_svg",
    "pass_fail_svg",
    "pareto_front",
    "tradeoff_svg",
    "TradeoffPoint",
    "number",
    "quality_floor",
    "short_label",
]

LABEL_W = 160
PLOT_W = 240
VALUE_W = 90
BAR_H = 18
BAR_GAP = 8
TOP = 8
AXIS_H = 30
#: Longest model name shown beside a bar; longer ones are cut with "…".
LABEL_CHARS = 24

PANEL_W = 320
PANEL_H = 240
PANEL_GAP = 24
PAD_L = 48
PAD_R = 16
PAD_T = 30
PAD_B = 44
#: The x axis runs from 0 to this many times the largest value, leaving room for labels.
X_HEADROOM = 1.15

_PASS = "#2da44e"
_FAIL = "#cf222e"
_OTHER = "#8c959f"
_INK = "#1f2328"
_MUTED = "#57606a"
_GRID = "#d0d7de"


def number(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros (``12``, ``226.66``)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fmt(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def _root(width: float, height: float, title: str, desc: str, kind: str) -> str:
    label = escape(title)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{kind}" width="{number(width)}" '
            f'height="{number(height)}" viewBox="0 0 {number(width)} {number(height)}" role="img" '
            f'aria-label="{label}"><title>{label}</title><desc>{escape(desc)}</desc>')


def _text(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "", fill: str = _INK) -> str:
    klass = f' class="{cls}"' if cls else ""
    return (f'<text x="{number(x)}" y="{number(y)}" text-anchor="{anchor}" fill="{fill}"{klass}>'
            f"{escape(text)}</text>")


@dataclass(frozen=True)
class Bar:
    """One bar's rectangle; ``width`` is 0 for a missing value."""

    x: float
    y: float
    width: float
    height: float


def _range(values: Sequence[float | None], threshold: float | None,
           value_range: Sequence[float | None]) -> tuple[float, float]:
    """The metric's declared range, or, where an end is not finite, one that holds every value.

    An unbounded end comes as an infinity, or as None where the range was read back from JSON.
    """
    lo = -math.inf if value_range[0] is None else float(value_range[0])
    hi = math.inf if value_range[1] is None else float(value_range[1])
    seen = [v for v in values if v is not None] + ([threshold] if threshold is not None else [])
    if not math.isfinite(lo):
        lo = min(seen + [0.0])
    if not math.isfinite(hi):
        hi = max(seen + [lo + 1.0])
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


def _x(value: float, lo: float, hi: float) -> float:
    """Position of ``value`` along the plot, clamped to it."""
    share = (value - lo) / (hi - lo)
    return LABEL_W + PLOT_W * min(1.0, max(0.0, share))


def bar_layout(values: Sequence[float | None], value_range: Sequence[float],
               threshold: float | None = None) -> tuple[list[Bar], float | None, float]:
    """Bars for ``values`` (in order), the threshold line's x (None without one), the height."""
    lo, hi = _range(values, threshold, value_range)
    bars = []
    for i, value in enumerate(values):
        y = TOP + i * (BAR_H + BAR_GAP)
        width = 0.0 if value is None else _x(value, lo, hi) - LABEL_W
        bars.append(Bar(LABEL_W, y, width, BAR_H))
    threshold_x = None if threshold is None else _x(threshold, lo, hi)
    height = TOP + len(values) * (BAR_H + BAR_GAP) - BAR_GAP + AXIS_H
    return bars, threshold_x, height


def _axis(bottom: float, lo: float, hi: float, threshold_x: float | None, threshold_label: str) -> list[str]:
    parts = [f'<line x1="{LABEL_W}" y1="{number(bottom)}" x2="{LABEL_W + PLOT_W}" y2="{number(bottom)}" '
             f'stroke="{_GRID}"/>',
             _text(LABEL_W, bottom + 14, format(lo, "g"), anchor="start", cls="tick", fill=_MUTED),
             _text(LABEL_W + PLOT_W, bottom + 14, format(hi, "g"), anchor="end", cls="tick", fill=_MUTED)]
    if threshold_x is not None:
        parts.append(_text(threshold_x, bottom + 26, threshold_label, anchor="middle", cls="tick", fill=_INK))
    return parts


def _error_bar(x1: float, x2: float, y: float, label: str) -> str:
    """An interval as a horizontal whisker with end caps, centred on a bar (``y`` its middle)."""
    return (f'<g class="ci"><title>{escape(label)}</title>'
            f'<line x1="{number(x1)}" y1="{number(y)}" x2="{number(x2)}" y2="{number(y)}" stroke="{_INK}" stroke-width="1.5"/>'
            f'<line x1="{number(x1)}" y1="{number(y - 4)}" x2="{number(x1)}" y2="{number(y + 4)}" stroke="{_INK}" stroke-width="1.5"/>'
            f'<line x1="{number(x2)}" y1="{number(y - 4)}" x2="{number(x2)}" y2="{number(y + 4)}" stroke="{_INK}" stroke-width="1.5"/></g>')


def metric_bars_svg(title: str, models: Sequence[str], values: Sequence[float | None], *,
                    threshold: float | None, value_range: Sequence[float], higher_is_better: bool = True,
                    leader: str | None = None,
                    intervals: Sequence[tuple[float, float] | None] | None = None) -> Markup:
    """Horizontal bars of one metric per model, coloured by the side of the threshold.

    Args:
        title: what the chart shows (evaluator and metric); escaped.
        models: model names, one per bar, top to bottom; escaped.
        values: the metric per model (None: no value, no bar).
        threshold: the threshold in force, drawn as a dashed line; None for none.
        value_range: the metric's declared [lo, hi]; bars are drawn on it.
        higher_is_better: which side of the threshold is green.
        leader: a model to mark with a star.
        intervals: per model, the (low, high) interval of its value, drawn as an error bar across
            the bar's middle from ``x(low)`` to ``x(high)``; None (or a None entry) for none.
    """
    intervals = list(intervals) if intervals is not None else [None] * len(values)
    lo, hi = _range(values, threshold, value_range)
    bars, threshold_x, height = bar_layout(values, value_range, threshold)
    width = LABEL_W + PLOT_W + VALUE_W
    better = "higher" if higher_is_better else "lower"
    words = []
    for model, value, interval in zip(models, values, intervals):
        if value is None:
            words.append(f"{model}: no value")
            continue
        fails = threshold is not None and (value < threshold if higher_is_better else value > threshold)
        side = "" if threshold is None else (" (fails the threshold)" if fails else " (meets the threshold)")
        between = "" if interval is None else f", interval {interval[0]:.4f} to {interval[1]:.4f}"
        words.append(f"{model}: {value:.4f}{between}{side}")
    desc = (f"{better.capitalize()} is better" + (f"; threshold {threshold:g}" if threshold is not None else "")
            + ". " + "; ".join(words) + ".")
    parts = [_root(width, height, title, desc, "bars")]
    plot_bottom = height - AXIS_H
    for model, value, bar in zip(models, values, bars):
        fails = value is not None and threshold is not None and (value < threshold if higher_is_better else value > threshold)
        label = short_label(model) + (" ★" if model == leader else "")
        parts.append(_text(LABEL_W - 6, bar.y + BAR_H / 2 + 4, label, anchor="end", cls="label"))
        if value is not None:
            colour = _FAIL if fails else _PASS
            parts.append(f'<rect class="bar {"fail" if fails else "pass"}" x="{number(bar.x)}" y="{number(bar.y)}" '
                         f'width="{number(bar.width)}" height="{number(bar.height)}" fill="{colour}">'
                         f"<title>{escape(f'{model}: {value:.4f}')}</title></rect>")
        parts.append(_text(LABEL_W + PLOT_W + 6, bar.y + BAR_H / 2 + 4, _fmt(value), cls="value"))
    for model, value, interval, bar in zip(models, values, intervals, bars):
        if value is not None and interval is not None:
            parts.append(_error_bar(_x(interval[0], lo, hi), _x(interval[1], lo, hi), bar.y + BAR_H / 2,
                                    f"{model}: interval {interval[0]:.4f} to {interval[1]:.4f}"))
    parts += _axis(plot_bottom, lo, hi, threshold_x, f"threshold {threshold:g}" if threshold is not None else "")
    if threshold_x is not None:
        parts.append(f'<line class="threshold" x1="{number(threshold_x)}" y1="{TOP - 4}" x2="{number(threshold_x)}" '
                     f'y2="{number(plot_bottom + 4)}" stroke="{_INK}" stroke-width="1.5" stroke-dasharray="4 3"/>')
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
        for name, n, colour in (("pass", passed, _PASS), ("fail", failed, _FAIL), ("other", other, _OTHER)):
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
                    f'y2="{number(plot_bottom + 4)}" stroke="{_INK}" stroke-width="1.5" stroke-dasharray="4 3"/>')
    return Markup(head + "".join(parts + whiskers + axis + line) + "</svg>")


def pareto_front(points: Mapping[str, Sequence[float]], minimise: Sequence[bool]) -> list[str]:
    """Names of the points no other point dominates, in the mapping's order.

    A point dominates another when it is at least as good on every axis and strictly better
    on one; ``minimise[k]`` says whether smaller is better on axis ``k``. Equal points do not
    dominate each other, so both stay on the front.
    """
    signed = {name: [(v if low else -v) for v, low in zip(p, minimise)] for name, p in points.items()}

    def dominates(a: list[float], b: list[float]) -> bool:
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return [name for name, p in signed.items() if not any(dominates(q, p) for other, q in signed.items() if other != name)]


@dataclass(frozen=True)
class TradeoffPoint:
    """One model in the trade-off chart: quality in [0, 1], mean seconds and USD per answer."""

    model: str
    quality: float
    seconds: float | None
    cost: float | None


def quality_floor(qualities: Sequence[float]) -> float:
    """The bottom of the quality axis: a tenth below the lowest quality's tenth, at least 0."""
    lowest = min(qualities, default=0.0)
    return max(0.0, (math.floor(lowest * 10) - 1) / 10)


def _panel(offset: float, title: str, axis_label: str, points: list[tuple[str, float, float]], unit_spec: str,
           y_lo: float) -> list[str]:
    """One scatter panel: x (lower is better) against quality (higher is better)."""
    left, right = offset + PAD_L, offset + PANEL_W - PAD_R
    top, bottom = PAD_T, PANEL_H - PAD_B
    x_hi = X_HEADROOM * max((x for _, x, _ in points), default=0.0) or 1.0
    front = set(pareto_front({m: (x, q) for m, x, q in points}, (True, False)))

    def px(x: float) -> float:
        return left + (right - left) * x / x_hi

    def py(q: float) -> float:
        return bottom - (bottom - top) * min(1.0, max(0.0, (q - y_lo) / (1.0 - y_lo)))

    middle = (top + bottom) / 2
    parts = [_text(offset + PANEL_W / 2, 14, title, anchor="middle", cls="panel-title"),
             f'<rect class="plot" x="{number(left)}" y="{number(top)}" width="{number(right - left)}" '
             f'height="{number(bottom - top)}" fill="none" stroke="{_GRID}"/>',
             _text(left - 4, bottom + 4, format(y_lo, "g"), anchor="end", cls="tick", fill=_MUTED),
             _text(left - 4, top + 4, "1", anchor="end", cls="tick", fill=_MUTED),
             f'<text x="{number(offset + 12)}" y="{number(middle)}" text-anchor="middle" fill="{_MUTED}" '
             f'class="axis-label" transform="rotate(-90 {number(offset + 12)} {number(middle)})">quality</text>',
             _text(left, bottom + 14, "0", anchor="start", cls="tick", fill=_MUTED),
             _text(right, bottom + 14, format(x_hi, unit_spec), anchor="end", cls="tick", fill=_MUTED),
             _text((left + right) / 2, bottom + 32, axis_label, anchor="middle", cls="axis-label", fill=_MUTED)]
    ordered = sorted((p for p in points if p[0] in front), key=lambda p: (p[1], -p[2]))
    if len(ordered) > 1:
        path = " ".join(f"{number(px(x))},{number(py(q))}" for _, x, q in ordered)
        parts.append(f'<polyline class="front" points="{path}" fill="none" stroke="{_INK}" stroke-width="1.5" '
                     f'stroke-dasharray="5 3"/>')
    for model, x, q in points:
        on_front = model in front
        cx, cy = px(x), py(q)
        parts.append(f'<circle class="point{" front" if on_front else ""}" cx="{number(cx)}" cy="{number(cy)}" '
                     f'r="5" fill="{_INK if on_front else "#ffffff"}" stroke="{_INK}" stroke-width="1.5">'
                     f"<title>{escape(f'{model}: quality {q:.4f}, {format(x, unit_spec)} {axis_label}')}"
                     f"{' (Pareto front)' if on_front else ''}</title></circle>")
        # Labels of points in the right part of the plot go to their left, so they stay inside.
        if cx > left + (right - left) * 0.6:
            parts.append(_text(cx - 8, cy - 7, short_label(model, 18), anchor="end", cls="point-label"))
        else:
            parts.append(_text(cx + 8, cy - 7, short_label(model, 18), cls="point-label"))
    return parts


def tradeoff_svg(points: Sequence[TradeoffPoint], quality_label: str) -> Markup | None:
    """Quality against mean cost and mean time per answer, each panel with its Pareto front.

    A panel is drawn only when every model has that measure; None when neither panel can be.
    ``quality_label`` names the y axis (what quality means) for the description.
    """
    panels = []
    if points and all(p.cost is not None for p in points):
        panels.append(("Quality vs mean cost per answer", "USD per answer",
                       [(p.model, float(p.cost), p.quality) for p in points], ".4g"))
    if points and all(p.seconds is not None for p in points):
        panels.append(("Quality vs mean time per answer", "seconds per answer",
                       [(p.model, float(p.seconds), p.quality) for p in points], ".3g"))
    if not panels:
        return None
    width = len(panels) * PANEL_W + (len(panels) - 1) * PANEL_GAP
    words = []
    for title, _, data, spec in panels:
        front = pareto_front({m: (x, q) for m, x, q in data}, (True, False))
        words.append(f"{title}: Pareto front {', '.join(front)}")
    desc = (f"Quality is {quality_label}, from {quality_floor([p.quality for p in points]):g} (bottom) to 1 (top); "
            "further left is cheaper or faster. "
            "Filled points joined by the dashed line are on the Pareto front: no other model is both "
            "at least as good on quality and at least as cheap or fast. " + "; ".join(words) + ".")
    parts = [_root(width, PANEL_H, "Quality, cost and speed per model", desc, "tradeoff")]
    y_lo = quality_floor([p.quality for p in points])
    for n, (title, axis_label, data, spec) in enumerate(panels):
        parts += _panel(n * (PANEL_W + PANEL_GAP), title, axis_label, data, spec, y_lo)
    parts.append("</svg>")
    return Markup("".join(parts))
