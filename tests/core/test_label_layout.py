"""Point labels of the trade-off chart: estimated text boxes, boxes and segments, and a placement in
which no two texts overlap and no label lies on the Pareto front's line (label_layout.py, svg_text.py).

The browser test (tests/test_report_first_screen_browser.py) measures the same on screen with getBBox().
"""

from __future__ import annotations

import itertools
import random
import re
import xml.etree.ElementTree as ET

import pytest

from sonar_core.artifacts.charts import TradeoffPoint, tradeoff_svg
from sonar_core.artifacts.label_layout import place_labels
from sonar_core.artifacts.svg_text import Box, text_box, text_width

SVG = "{http://www.w3.org/2000/svg}"
SIZES = {"panel-title": (13, True), "tick": (11, False), "axis-label": (11, False), "point-label": (12, False)}


def test_text_width_by_hand():
    # em per character: narrow (i l . - space ...) 0.45, wide (m w M W @ ...) 1.0, other upper case 0.8,
    # the rest of ASCII 0.65, anything else 1.0.
    assert text_width("ab", 10) == pytest.approx(13.0)
    assert text_width("il-", 10) == pytest.approx(13.5)
    assert text_width("mW", 10) == pytest.approx(20.0)
    assert text_width("AB", 10) == pytest.approx(16.0)
    assert text_width("é", 10) == pytest.approx(10.0)
    assert text_width("ab", 10, bold=True) == pytest.approx(13.0 * 1.12)


def test_text_box_by_anchor():
    # "ab" at 10 px is 13 wide; the box runs 9.5 above the baseline and 2.6 below it.
    assert text_box(100, 50, "ab", 10, "start") == pytest.approx(Box(100, 40.5, 113, 52.6))
    assert text_box(100, 50, "ab", 10, "middle") == pytest.approx(Box(93.5, 40.5, 106.5, 52.6))
    assert text_box(100, 50, "ab", 10, "end") == pytest.approx(Box(87, 40.5, 100, 52.6))


def test_boxes_overlap_and_segments_cross_by_hand():
    box = Box(0, 0, 10, 10)
    assert box.overlaps(Box(9, 9, 20, 20)) and not box.overlaps(Box(10, 0, 20, 10))  # an edge is no overlap
    assert box.overlaps(Box(11, 0, 20, 10), pad=1.5) and not box.overlaps(Box(12, 0, 20, 10), pad=1.5)
    assert box.crosses((-5, 5), (15, 5))          # straight through
    assert box.crosses((5, 5), (50, 50))          # starts inside
    assert not box.crosses((-5, -1), (15, -1))    # passes above
    assert box.crosses((-5, -1), (15, -1), pad=1.5)
    assert not box.crosses((12, -10), (30, 5))    # beside it
    assert box.crosses((-5, 20), (20, -5))        # the diagonal through a corner region: y = 15 - x


def test_a_label_keeps_off_a_line_through_its_first_place():
    # The first place tried is the upper right (x + 4, baseline y - 7.75 - 3.12); a line rising to the
    # right from the point lies under it, so the upper left is taken.
    (label,) = place_labels([(100, 100)], ["model"], size=12, bounds=Box(0, 0, 300, 200),
                            segments=[((100, 100), (200, 40))], marker=5.75)
    assert (label.x, round(label.y, 2), label.anchor) == (96, 89.13, "end")


def test_a_label_at_the_top_edge_goes_below_its_point_and_off_the_title():
    title = text_box(160, 14, "Quality vs mean cost per answer", 13, "middle", bold=True)
    (label,) = place_labels([(150, 31)], ["acme-gpt-large"], size=12, bounds=Box(49, 31, 303, 195),
                            obstacles=[title], marker=5.75)
    assert label.box.y0 > 31 + 5.75 and not label.box.overlaps(title)


def test_a_label_without_room_is_cut_then_left_out():
    # 80 x 44: the full name (about 160 px) fits nowhere; cut to "a-very-…" (59.4 px) it fits above its
    # point, centred. The second point's label then has no room: above and beside it is the edge, below
    # it the first label.
    placed = place_labels([(40, 34), (40, 6)], ["a-very-long-model-name", "other-long-name"], size=12,
                          bounds=Box(0, 0, 80, 44), marker=3)
    assert placed[0] is not None and (placed[0].text, placed[0].anchor, placed[0].x) == ("a-very-…", "middle", 40)
    assert placed[1] is None


def _text_boxes(svg: str) -> list[tuple[str, str, Box]]:
    """Every text of a trade-off chart with its estimated box (the rotated axis label turned)."""
    out = []
    for t in ET.fromstring(svg).iter(f"{SVG}text"):
        size, bold = SIZES[t.attrib["class"]]
        box = text_box(float(t.attrib["x"]), float(t.attrib["y"]), t.text, size, t.attrib["text-anchor"], bold)
        if "rotate(-90" in t.attrib.get("transform", ""):
            cx, cy = float(t.attrib["x"]), float(t.attrib["y"])
            box = Box(cx - (cy - box.y0), cy - (cx - box.x0), cx + (box.y1 - cy), cy + (box.x1 - cx))
        out.append((t.attrib["class"], t.text, box))
    return out


def _fronts(svg: str) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    segments = []
    for line in ET.fromstring(svg).iter(f"{SVG}polyline"):
        pts = [tuple(map(float, p.split(","))) for p in line.attrib["points"].split()]
        segments += list(zip(pts, pts[1:]))
    return segments


def _assert_clear(svg: str) -> None:
    boxes = _text_boxes(svg)
    for (_, a, box_a), (_, b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), (a, b)
    for cls, text, box in boxes:
        if cls == "point-label":
            assert not any(box.crosses(a, b) for a, b in _fronts(svg)), text


def test_the_quickstart_chart_has_no_overlapping_text_and_no_label_on_the_line():
    # The quickstart's models (mean cost and time per answer, share of checks passed).
    points = [TradeoffPoint("acme-gpt-large", 0.8306, 1.488, 0.000896),
              TradeoffPoint("llama-3.1-8b-rag", 0.7753, 0.455, 0.000016),
              TradeoffPoint("mistral-7b-chat", 0.6875, 0.689, 0.000024)]
    svg = str(tradeoff_svg(points, "share passed"))
    _assert_clear(svg)
    assert len(re.findall('class="point-label"', svg)) == 6  # every model named in both panels


def test_a_model_at_full_quality_is_not_written_over_the_title():
    points = [TradeoffPoint("perfect-model-name", 1.0, 1.0, 0.01), TradeoffPoint("b", 0.5, 0.2, 0.002)]
    _assert_clear(str(tradeoff_svg(points, "q")))


@pytest.mark.parametrize("seed", range(25))
def test_crowded_charts_never_overlap(seed):
    rng = random.Random(seed)
    points = [TradeoffPoint(f"model-{i}-{'x' * rng.randrange(0, 12)}", rng.uniform(0.3, 1.0),
                            rng.uniform(0.1, 3.0), rng.uniform(0.0001, 0.002)) for i in range(rng.randrange(2, 12))]
    svg = str(tradeoff_svg(points, "q"))
    _assert_clear(svg)
    assert svg == str(tradeoff_svg(points, "q"))  # deterministic
