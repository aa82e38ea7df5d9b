"""Where a scatter chart's point labels go: beside their points, never on each other, on another
text, on a point, or on a drawn line.

Deterministic: each label tries a fixed list of places around its point, in order, and takes the
first whose estimated box (:func:`.svg_text.text_box`) stays inside the bounds, keeps clear of every
obstacle (the chart's other texts, the points' markers, the labels placed before it) and crosses no
segment (the Pareto front's line). Labels are placed in the order given. A label that finds no place
is tried cut to :data:`SHORT_CHARS` characters, and is left out when that finds none either (the
point keeps its tooltip, and the table beside the chart names every model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .svg_text import ASCENT, DESCENT, Box, short_label, text_box

__all__ = ["Placed", "place_labels", "SHORT_CHARS", "CLEARANCE"]

#: A label that fits nowhere at full length is tried at this many characters.
SHORT_CHARS = 8
#: Space kept between a label's box and anything else, in pixels.
CLEARANCE = 1.5
Point = tuple[float, float]


@dataclass(frozen=True)
class Placed:
    """A placed label: ``<text x y text-anchor>`` (``y`` the baseline), its text and estimated box."""

    x: float
    y: float
    anchor: str
    text: str
    box: Box


def _candidates(cx: float, cy: float, size: float, gap: float, prefer_left: bool) -> list[tuple[str, float, float]]:
    """(anchor, x, baseline y) of each place to try, in order: above, beside, below, then further off."""
    ascent, descent = ASCENT * size, DESCENT * size
    middle = cy + (ascent - descent) / 2  # a baseline that centres the box on the point
    above, below = cy - gap - descent, cy + gap + ascent
    right = [("start", cx + 4, above), ("start", cx + gap, middle), ("start", cx + 4, below)]
    left = [("end", cx - 4, above), ("end", cx - gap, middle), ("end", cx - 4, below)]
    first, second = (left, right) if prefer_left else (right, left)
    places = [first[0], first[1], second[0], second[1], first[2], second[2],
              ("middle", cx, above), ("middle", cx, below)]
    line = ascent + descent
    for step in (1, 2):  # further up and down, a line at a time
        for anchor, x in (("middle", cx), first[0][:2], second[0][:2]):
            places.append((anchor, x, above - step * line))
            places.append((anchor, x, below + step * line))
    return places


def place_labels(points: Sequence[Point], texts: Sequence[str], *, size: float, bounds: Box,
                 obstacles: Sequence[Box] = (), segments: Sequence[tuple[Point, Point]] = (),
                 marker: float = 6.0, prefer_left: Sequence[bool] | None = None) -> list[Placed | None]:
    """One label per point (None where none fits), in the order given.

    Args:
        points: each label's point (the marker's centre).
        texts: the labels, as drawn.
        size: their font size in px.
        bounds: every label's box stays inside this one.
        obstacles: boxes no label may touch (the chart's fixed texts).
        segments: lines no label may cross (the Pareto front).
        marker: the markers' half-size in px (radius and stroke); every marker is an obstacle.
        prefer_left: per point, try places to its left first (points near the right edge).
    """
    taken = list(obstacles) + [Box(x - marker, y - marker, x + marker, y + marker) for x, y in points]
    gap = marker + 2
    out: list[Placed | None] = []
    for i, ((cx, cy), text) in enumerate(zip(points, texts)):
        left = bool(prefer_left[i]) if prefer_left is not None else False
        found = None
        for shown in dict.fromkeys((text, short_label(text, SHORT_CHARS))):
            for anchor, x, y in _candidates(cx, cy, size, gap, left):
                box = text_box(x, y, shown, size, anchor)
                if (box.inside(bounds) and not any(box.overlaps(o, CLEARANCE) for o in taken)
                        and not any(box.crosses(a, b, CLEARANCE) for a, b in segments)):
                    found = Placed(x, y, anchor, shown, box)
                    break
            if found:
                break
        if found:
            taken.append(found.box)
        out.append(found)
    return out
