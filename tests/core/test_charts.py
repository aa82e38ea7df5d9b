"""The SVG charts: geometry computed by hand from charts.py's documented constants.

Bars: label column 160, plot 240, value column 90 wide; bar i at y = 8 + 26 i, 18 high;
the height is 8 + 26 n - 8 + 30. Scatter panels: 320 x 240, 24 apart; the plot spans
x 48..304 and y 30..196 inside a panel; x runs from 0 to 1.15 x the largest value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from sonar_core.artifacts.charts import (
    TradeoffPoint,
    bar_layout,
    metric_bars_svg,
    number,
    pareto_front,
    pass_fail_svg,
    quality_floor,
    short_label,
    tradeoff_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def _parse(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))  # well-formed XML, or this raises


def _rects(root: ET.Element, cls: str) -> list[dict[str, str]]:
    return [r.attrib for r in root.iter(f"{SVG}rect") if cls in r.attrib.get("class", "").split()]


def _texts(root: ET.Element, cls: str) -> list[tuple[str, str, str]]:
    return [(t.attrib["x"], t.attrib["y"], t.text) for t in root.iter(f"{SVG}text") if t.attrib.get("class") == cls]


def test_number_keeps_two_decimals_without_trailing_zeros():
    assert [number(v) for v in (12.0, 226.656, 0.5, 79.992, -0.001, 386.6666)] == [
        "12", "226.66", "0.5", "79.99", "0", "386.67"]


def test_short_label_cuts_long_names():
    assert short_label("a" * 24) == "a" * 24
    assert short_label("b" * 30) == "b" * 23 + "…"


def test_bar_layout_by_hand():
    bars, threshold_x, height = bar_layout([0.9444, 0.5, None, 1.5, -1.0], (0.0, 1.0), 0.5)
    # widths: 0.9444 x 240 = 226.656; 0.5 x 240 = 120; none; clamped to 240 and to 0.
    assert [(b.x, b.y, round(b.width, 3), b.height) for b in bars] == [
        (160, 8, 226.656, 18), (160, 34, 120.0, 18), (160, 60, 0.0, 18), (160, 86, 240.0, 18), (160, 112, 0.0, 18)]
    assert threshold_x == 280.0  # 160 + 0.5 x 240
    assert height == 8 + 5 * 26 - 8 + 30


def test_bar_layout_without_a_finite_range_holds_every_value():
    bars, threshold_x, _ = bar_layout([2.0, 8.0], (0.0, float("inf")), 4.0)
    assert [b.width for b in bars] == [60.0, 240.0]  # range 0..8: 2/8 and 8/8 of 240
    assert threshold_x == 280.0


def test_metric_bars_svg_by_hand():
    svg = metric_bars_svg("Acc <b>", ["a", "b", "c"], [0.9444, 0.5, None], threshold=0.5,
                          value_range=(0.0, 1.0), leader="a")
    root = _parse(svg)
    assert root.attrib["width"] == "490" and root.attrib["height"] == "108"  # 8 + 78 - 8 + 30
    assert root.attrib["role"] == "img" and root.attrib["aria-label"] == "Acc <b>"
    assert root.find(f"{SVG}title").text == "Acc <b>"
    assert root.find(f"{SVG}desc").text == (
        "Higher is better; threshold 0.5. a: 0.9444 (meets the threshold); b: 0.5000 (meets the threshold); "
        "c: no value.")
    bars = [(r["class"], r["x"], r["y"], r["width"], r["height"], r["fill"]) for r in _rects(root, "bar")]
    # 0.5 is not below the threshold 0.5: it passes. c has no value and no bar.
    assert bars == [("bar pass", "160", "8", "226.66", "18", "#2da44e"), ("bar pass", "160", "34", "120", "18", "#2da44e")]
    assert _texts(root, "label") == [("154", "21", "a ★"), ("154", "47", "b"), ("154", "73", "c")]
    assert _texts(root, "value") == [("406", "21", "0.9444"), ("406", "47", "0.5000"), ("406", "73", "–")]
    (line,) = [e.attrib for e in root.iter(f"{SVG}line") if e.attrib.get("class") == "threshold"]
    assert (line["x1"], line["x2"], line["y1"], line["y2"]) == ("280", "280", "4", "82")  # plot bottom 78 + 4
    assert ("280", "104", "threshold 0.5") in _texts(root, "tick")


def test_metric_bars_lower_is_better_colours_by_the_other_side():
    root = _parse(metric_bars_svg("Err", ["x", "y"], [0.2, 0.7], threshold=0.5, value_range=(0, 1),
                                  higher_is_better=False))
    assert [(r["class"], r["width"]) for r in _rects(root, "bar")] == [("bar pass", "48"), ("bar fail", "168")]
    assert root.find(f"{SVG}desc").text.startswith("Lower is better; threshold 0.5. x: 0.2000 (meets")


def test_pass_fail_svg_by_hand():
    root = _parse(pass_fail_svg("Leaks", ["m1", "m2", "m3"], [
        {"pass": 17, "fail": 1}, {"pass": 6, "fail": 12}, {"pass": 3, "fail": 1, "parse_failure": 1}],
        threshold_share=0.5))
    segments = [(r["class"], r["x"], r["y"], r["width"]) for r in (e.attrib for e in root.iter(f"{SVG}rect"))]
    assert segments == [
        ("seg pass", "160", "8", "226.67"), ("seg fail", "386.67", "8", "13.33"),   # 17/18 and 1/18 of 240
        ("seg pass", "160", "34", "80"), ("seg fail", "240", "34", "160"),          # 6/18 and 12/18
        ("seg pass", "160", "60", "144"), ("seg fail", "304", "60", "48"), ("seg other", "352", "60", "48"),
    ]
    assert [t for _, _, t in _texts(root, "value")] == ["17/18 pass", "6/18 pass", "3/5 pass"]
    (line,) = [e.attrib for e in root.iter(f"{SVG}line") if e.attrib.get("class") == "threshold"]
    assert line["x1"] == "280"
    assert "m3: 3 of 5 rows pass, 1 fail, 1 could not be checked" in root.find(f"{SVG}desc").text


def test_pareto_front_of_hand_made_points():
    points = {"a": (1.0, 0.9), "b": (0.5, 0.8), "c": (0.6, 0.7), "d": (0.5, 0.8), "e": (2.0, 0.9)}
    # c is dominated by b (cheaper and better); e by a (cheaper, as good); b and d are equal: both stay.
    assert pareto_front(points, (True, False)) == ["a", "b", "d"]
    three = {"x": (1, 1, 0.5), "y": (2, 0.5, 0.5), "z": (2, 2, 0.4)}
    assert pareto_front(three, (True, True, False)) == ["x", "y"]
    assert pareto_front({"only": (3.0, 0.1)}, (True, False)) == ["only"]


def test_quality_floor():
    assert [quality_floor(q) for q in ([0.5, 0.9], [0.7865], [1.0], [0.04], [])] == [0.4, 0.6, 0.9, 0.0, 0.0]


def test_tradeoff_svg_by_hand():
    points = [TradeoffPoint("A", 0.9, 2.0, 0.004), TradeoffPoint("B", 0.6, 0.5, 0.001),
              TradeoffPoint("C", 0.5, 1.0, 0.002)]
    root = _parse(tradeoff_svg(points, "share passed"))
    assert root.attrib["width"] == "664"  # two panels of 320, 24 apart
    circles = [(c.attrib["class"], c.attrib["cx"], c.attrib["cy"]) for c in root.iter(f"{SVG}circle")]
    # Quality axis 0.4 (floor of 0.5, less a tenth) .. 1 over y 196..30: y = 196 - 166 (q - 0.4) / 0.6.
    # Cost panel: x = 48 + 256 c / 0.0046; time panel (offset 344): x = 392 + 256 s / 2.3.
    assert circles == [
        ("point front", "270.61", "57.67"), ("point front", "103.65", "140.67"), ("point", "159.3", "168.33"),
        ("point front", "614.61", "57.67"), ("point front", "447.65", "140.67"), ("point", "503.3", "168.33"),
    ]
    fronts = [p.attrib["points"] for p in root.iter(f"{SVG}polyline")]
    assert fronts == ["103.65,140.67 270.61,57.67", "447.65,140.67 614.61,57.67"]
    desc = root.find(f"{SVG}desc").text
    assert "Quality is share passed, from 0.4 (bottom) to 1 (top)" in desc
    assert "Quality vs mean cost per answer: Pareto front A, B" in desc
    # A sits right of 60 % of the plot: its label goes to its left.
    labels = [(t.attrib["x"], t.attrib["text-anchor"], t.text) for t in root.iter(f"{SVG}text")
              if t.attrib.get("class") == "point-label"]
    assert labels[:3] == [("262.61", "end", "A"), ("111.65", "start", "B"), ("167.3", "start", "C")]


def test_tradeoff_svg_draws_only_the_panels_it_has_data_for():
    no_cost = [TradeoffPoint("A", 0.9, 2.0, None), TradeoffPoint("B", 0.6, 0.5, 0.001)]
    root = _parse(tradeoff_svg(no_cost, "q"))
    assert root.attrib["width"] == "320"
    assert [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "panel-title"] == [
        "Quality vs mean time per answer"]
    assert tradeoff_svg([TradeoffPoint("A", 0.9, None, None)], "q") is None
    assert tradeoff_svg([], "q") is None


@pytest.mark.parametrize("draw", [
    lambda name: metric_bars_svg(name, [name], [0.3], threshold=0.5, value_range=(0, 1), leader=name),
    lambda name: pass_fail_svg(name, [name], [{"pass": 1, "fail": 1}], threshold_share=0.5),
    lambda name: tradeoff_svg([TradeoffPoint(name, 0.5, 1.0, 0.1), TradeoffPoint("b", 0.7, 2.0, 0.2)], name),
])
def test_every_label_is_escaped(draw):
    hostile = '<script>alert(1)</script>&"\'<img src=x onerror=alert(2)>'
    markup = str(draw(hostile))
    assert "<script" not in markup and "<img" not in markup
    root = _parse(markup)  # the escaped text parses back to the very name
    texts = [e.text or "" for e in root.iter()]
    assert any(hostile in t for t in texts)
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "img", "foreignObject")]
    assert not [a for e in root.iter() for a in e.attrib if a.lower().startswith("on")]
