"""The quality / cost / speed chart: quality against mean cost and against mean time per answer, one
scatter panel each, with each panel's Pareto front joined by a dashed line.

Geometry, in SVG user units, for tests to check by hand: panels are :data:`PANEL_W` x :data:`PANEL_H`,
the second one :data:`PANEL_GAP` to the right of the first; inside a panel the plot spans
``[PAD_L, PANEL_W - PAD_R]`` across and ``[PAD_T, PANEL_H - PAD_B]`` down; x runs from 0 to
:data:`X_HEADROOM` times the largest value shown, quality from :func:`quality_floor` (bottom) to 1
(top). Point labels are laid out by :func:`.label_layout.place_labels`: inside the plot, clear of the
panel's other texts, of every point and of each other, and off the front's line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Mapping, Sequence

from markupsafe import Markup

from .label_layout import place_labels
from .svg_text import (ASCENT, DESCENT, GRID, INK, LABEL_PX, MUTED, TICK_PX, TITLE_PX, Box, number, short_label,
                       svg_root, svg_text, text_box, text_width)

__all__ = ["TradeoffPoint", "pareto_front", "quality_floor", "tradeoff_svg", "POINT_LABEL_CHARS"]

PANEL_W = 320
PANEL_H = 240
PANEL_GAP = 24
PAD_L = 48
PAD_R = 16
PAD_T = 30
PAD_B = 44
#: The x axis runs from 0 to this many times the largest value, leaving room for labels.
X_HEADROOM = 1.15
#: Longest model name written beside a point.
POINT_LABEL_CHARS = 18
#: A point's marker: its radius, and half its stroke.
POINT_R = 5
POINT_STROKE = 0.75


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


def _fixed_texts(offset: float, title: str, axis_label: str, y_lo: float, x_hi_text: str) -> tuple[list[str], list[Box]]:
    """A panel's title, ticks and axis labels, and the estimated box of each."""
    left, right = offset + PAD_L, offset + PANEL_W - PAD_R
    top, bottom = PAD_T, PANEL_H - PAD_B
    texts = [  # x, y, text, anchor, class, fill, size, bold
        (offset + PANEL_W / 2, 14, title, "middle", "panel-title", INK, TITLE_PX, True),
        (left - 4, bottom + 4, format(y_lo, "g"), "end", "tick", MUTED, TICK_PX, False),
        (left - 4, top + 4, "1", "end", "tick", MUTED, TICK_PX, False),
        (left, bottom + 14, "0", "start", "tick", MUTED, TICK_PX, False),
        (right, bottom + 14, x_hi_text, "end", "tick", MUTED, TICK_PX, False),
        ((left + right) / 2, bottom + 32, axis_label, "middle", "axis-label", MUTED, TICK_PX, False),
    ]
    parts = [svg_text(x, y, text, anchor=anchor, cls=cls, fill=fill) for x, y, text, anchor, cls, fill, _, _ in texts]
    boxes = [text_box(x, y, text, size, anchor, bold) for x, y, text, anchor, _, _, size, bold in texts]
    # "quality", turned a quarter to the left about its anchor: the box's sides swap.
    cx, cy, half = offset + 12, (top + bottom) / 2, text_width("quality", TICK_PX) / 2
    parts.append(f'<text x="{number(cx)}" y="{number(cy)}" text-anchor="middle" fill="{MUTED}" '
                 f'class="axis-label" transform="rotate(-90 {number(cx)} {number(cy)})">quality</text>')
    boxes.append(Box(cx - ASCENT * TICK_PX, cy - half, cx + DESCENT * TICK_PX, cy + half))
    return parts, boxes


def _panel(offset: float, title: str, axis_label: str, points: list[tuple[str, float, float]], unit_spec: str,
           y_lo: float) -> tuple[list[str], list[str]]:
    """One scatter panel: x (lower is better) against quality (higher is better). Returns its markup
    and the models whose label found no room."""
    left, right = offset + PAD_L, offset + PANEL_W - PAD_R
    top, bottom = PAD_T, PANEL_H - PAD_B
    x_hi = X_HEADROOM * max((x for _, x, _ in points), default=0.0) or 1.0
    front = set(pareto_front({m: (x, q) for m, x, q in points}, (True, False)))

    def px(x: float) -> float:
        return left + (right - left) * x / x_hi

    def py(q: float) -> float:
        return bottom - (bottom - top) * min(1.0, max(0.0, (q - y_lo) / (1.0 - y_lo)))

    parts, fixed = _fixed_texts(offset, title, axis_label, y_lo, format(x_hi, unit_spec))
    parts.insert(1, f'<rect class="plot" x="{number(left)}" y="{number(top)}" width="{number(right - left)}" '
                    f'height="{number(bottom - top)}" fill="none" stroke="{GRID}"/>')
    ordered = sorted((p for p in points if p[0] in front), key=lambda p: (p[1], -p[2]))
    line = [(float(number(px(x))), float(number(py(q)))) for _, x, q in ordered]
    if len(ordered) > 1:
        path = " ".join(f"{number(x)},{number(y)}" for x, y in line)
        parts.append(f'<polyline class="front" points="{path}" fill="none" stroke="{INK}" stroke-width="1.5" '
                     f'stroke-dasharray="5 3"/>')
    centres = [(px(x), py(q)) for _, x, q in points]
    for (model, x, q), (cx, cy) in zip(points, centres):
        on_front = model in front
        parts.append(f'<circle class="point{" front" if on_front else ""}" cx="{number(cx)}" cy="{number(cy)}" '
                     f'r="{POINT_R}" fill="{INK if on_front else "#ffffff"}" stroke="{INK}" stroke-width="1.5">'
                     f"<title>{escape(f'{model}: quality {q:.4f}, {format(x, unit_spec)} {axis_label}')}"
                     f"{' (Pareto front)' if on_front else ''}</title></circle>")
    placed = place_labels(centres, [short_label(m, POINT_LABEL_CHARS) for m, _, _ in points], size=LABEL_PX,
                          bounds=Box(left + 1, top + 1, right - 1, bottom - 1), obstacles=fixed,
                          segments=list(zip(line, line[1:])), marker=POINT_R + POINT_STROKE,
                          # Points in the right part of the plot try their left side first.
                          prefer_left=[cx > left + (right - left) * 0.6 for cx, _ in centres])
    for label in placed:
        if label is not None:
            parts.append(svg_text(label.x, label.y, label.text, anchor=label.anchor, cls="point-label"))
    return parts, [m for (m, _, _), label in zip(points, placed) if label is None]


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
    y_lo = quality_floor([p.quality for p in points])
    body: list[str] = []
    words = []
    for n, (title, axis_label, data, spec) in enumerate(panels):
        parts, unlabelled = _panel(n * (PANEL_W + PANEL_GAP), title, axis_label, data, spec, y_lo)
        body += parts
        front = pareto_front({m: (x, q) for m, x, q in data}, (True, False))
        words.append(f"{title}: Pareto front {', '.join(front)}"
                     + (f" (no room to name {', '.join(unlabelled)}: see the table)" if unlabelled else ""))
    desc = (f"Quality is {quality_label}, from {y_lo:g} (bottom) to 1 (top); "
            "further left is cheaper or faster. "
            "Filled points joined by the dashed line are on the Pareto front: no other model is both "
            "at least as good on quality and at least as cheap or fast. " + "; ".join(words) + ".")
    return Markup(svg_root(width, PANEL_H, "Quality, cost and speed per model", desc, "tradeoff")
                  + "".join(body) + "</svg>")
