"""What every SVG chart shares: colours, numbers as coordinates, escaped text, and text boxes.

A chart is drawn before any browser sees it, so the space a label takes is estimated from its font
size and characters (:func:`text_width`). The estimate is meant to be at least what a browser draws
with the pages' fonts (``-apple-system, "Segoe UI", Helvetica, Arial, sans-serif``: Arial's metrics,
or DejaVu Sans where only it is installed, the wider of the two), so boxes that do not overlap as
estimated do not overlap on screen. The font sizes are the pages' stylesheet's (templates/_style.css:
``svg.chart`` 12 px, ``.tick`` and ``.axis-label`` 11 px, ``.panel-title`` 13 px bold).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

__all__ = ["Box", "number", "short_label", "fmt_value", "svg_root", "svg_text", "text_width", "text_box", "ASCENT", "DESCENT",
           "LABEL_CHARS", "LABEL_PX", "TICK_PX", "TITLE_PX"]

#: Longest model name shown beside a bar; longer ones are cut with "…".
LABEL_CHARS = 24
#: Font sizes in CSS pixels, as templates/_style.css sets them.
LABEL_PX = 12
TICK_PX = 11
TITLE_PX = 13

PASS = "#2da44e"
FAIL = "#cf222e"
OTHER = "#8c959f"
#: Bars of a metric without a threshold: no side to be on, so neither pass green nor fail red.
NEUTRAL = "#54aeff"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d0d7de"

# Advance widths in em, rounded up over Arial (Liberation Sans) and DejaVu Sans, the wider one.
_NARROW = set("ijlI.,:;'|!()[]/\\ftr -")
_WIDE = set("mwMW@%#&+=<>~^…★")
#: Of a text box: the part above the baseline and below it, in em (the fonts' ascent and descent).
ASCENT = 0.95
DESCENT = 0.26
#: Bold text is wider by about this much.
BOLD = 1.12


def number(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros (``12``, ``226.66``)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fmt_value(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def svg_root(width: float, height: float, title: str, desc: str, kind: str) -> str:
    label = escape(title)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{kind}" width="{number(width)}" '
            f'height="{number(height)}" viewBox="0 0 {number(width)} {number(height)}" role="img" '
            f'aria-label="{label}"><title>{label}</title><desc>{escape(desc)}</desc>')


def svg_text(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "", fill: str = INK) -> str:
    klass = f' class="{cls}"' if cls else ""
    return (f'<text x="{number(x)}" y="{number(y)}" text-anchor="{anchor}" fill="{fill}"{klass}>'
            f"{escape(text)}</text>")


def _char_em(char: str) -> float:
    if char in _WIDE:
        return 1.0
    if char in _NARROW:
        return 0.45
    if not char.isascii():
        return 1.0
    if char.isupper():
        return 0.8
    return 0.65  # lower-case letters, digits and the rest of ASCII


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The estimated width in pixels of ``text`` at ``size`` px (at least what a browser draws)."""
    return sum(_char_em(c) for c in text) * size * (BOLD if bold else 1.0)


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle, ``x0 <= x1`` and ``y0 <= y1`` (SVG user units, y down)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: "Box", pad: float = 0.0) -> bool:
        """Whether the two share more than an edge, this one grown by ``pad`` on every side."""
        return (self.x0 - pad < other.x1 and other.x0 < self.x1 + pad
                and self.y0 - pad < other.y1 and other.y0 < self.y1 + pad)

    def inside(self, other: "Box") -> bool:
        return self.x0 >= other.x0 and self.x1 <= other.x1 and self.y0 >= other.y0 and self.y1 <= other.y1

    def crosses(self, a: tuple[float, float], b: tuple[float, float], pad: float = 0.0) -> bool:
        """Whether the segment from ``a`` to ``b`` passes through the box grown by ``pad``
        (Liang–Barsky clipping of the segment against the box)."""
        x0, y0, x1, y1 = self.x0 - pad, self.y0 - pad, self.x1 + pad, self.y1 + pad
        dx, dy = b[0] - a[0], b[1] - a[1]
        low, high = 0.0, 1.0
        for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
            if p == 0:
                if q < 0:
                    return False  # parallel to this edge and outside it
                continue
            t = q / p
            if p < 0:
                low = max(low, t)
            else:
                high = min(high, t)
            if low > high:
                return False
        return True


def text_box(x: float, y: float, text: str, size: float, anchor: str = "start", bold: bool = False) -> Box:
    """The estimated box of ``<text x y text-anchor>`` (``y`` its baseline) at ``size`` px."""
    width = text_width(text, size, bold)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(left, y - ASCENT * size, left + width, y + DESCENT * size)
