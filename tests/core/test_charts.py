"""The SVG charts: geometry computed by hand from charts.py's documented constants.

Bars: label column 160, plot 240, value column 90 wide; bar i at y = 8 + 26 i, 18 high;
the height is 8 + 26 n - 8 + 30. Scatter panels: 320 x 240, 24 apart; the plot spans
x 48..304 and y 30..196 inside a panel; x runs from 0 to 1.15 x the largest value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from sonar_core.artifacts.charts import (
    bar_layout,
    metric_bars_svg,
    number,
    pass_fail_svg,
    quality_floor,
    short_label,
)
from sonar_core.artifacts.charts import tradeoff_svg
from sonar_core.findings.tradeoff import pareto_front, with_fronts
from sonar_core.findings.types import TradeoffRow


def _row(model, quality, seconds, cost):
    """A model's trade-off point as the findings hand it to the chart (fronts set by with_fronts)."""
    return TradeoffRow(model=model, passed=0, checked=0, quality=quality, seconds=seconds, cost=cost)


def _svg(points, quality_label):
    """The chart of ``points``, with the Pareto fronts the findings conclude."""
    return tradeoff_svg(with_fronts(points), quality_label)


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


@pytest.mark.parametrize("unbounded", [float("inf"), None], ids=["inf", "null from JSON"])
def test_bar_layout_without_a_finite_range_holds_every_value(unbounded):
    bars, threshold_x, _ = bar_layout([2.0, 8.0], (0.0, unbounded), 4.0)
    assert [b.width for b in bars] == [60.0, 240.0]  # range 0..8: 2/8 and 8/8 of 240
    assert threshold_x == 280.0


def test_metric_bars_svg_by_hand():
    svg = metric_bars_svg("Acc <b>", ["a", "b", "c"], [0.9444, 0.5, None], threshold=0.5,
                          value_range=(0.0, 1.0), fails=[False, False, False], leader="a")
    root = _parse(svg)
    assert root.attrib["width"] == "490" and root.attrib["height"] == "108"  # 8 + 78 - 8 + 30
    assert root.attrib["role"] == "img" and root.attrib["aria-label"] == "Acc <b>"
    assert root.find(f"{SVG}title").text == "Acc <b>"
    assert root.find(f"{SVG}desc").text == (
        "Higher is better; threshold 0.5. a: 0.9444 (meets the threshold); b: 0.5000 (meets the threshold); "
        "c: no value.")
    bars = [(r["class"], r["x"], r["y"], r["width"], r["height"], r["fill"]) for r in _rects(root, "bar")]
    # b (0.5, not below the threshold 0.5: the findings say it passes) is green. c has no value and no bar.
    assert bars == [("bar pass", "160", "8", "226.66", "18", "#2da44e"), ("bar pass", "160", "34", "120", "18", "#2da44e")]
    assert _texts(root, "label") == [("154", "21", "a ★"), ("154", "47", "b"), ("154", "73", "c")]
    assert _texts(root, "value") == [("406", "21", "0.9444"), ("406", "47", "0.5000"), ("406", "73", "–")]
    (line,) = [e.attrib for e in root.iter(f"{SVG}line") if e.attrib.get("class") == "threshold"]
    assert (line["x1"], line["x2"], line["y1"], line["y2"]) == ("280", "280", "4", "82")  # plot bottom 78 + 4
    assert ("280", "104", "threshold 0.5") in _texts(root, "tick")


def test_metric_bars_lower_is_better_colours_by_the_other_side_and_grows_towards_better():
    root = _parse(metric_bars_svg("Err", ["x", "y"], [0.2, 0.7], threshold=0.5, value_range=(0, 1),
                                  fails=[False, True], higher_is_better=False))
    # The axis runs from 1 (left) to 0 (right): x = 0.2 is (1 - 0.2) x 240 = 192 long, y = 0.7 is 72;
    # the threshold 0.5 at 160 + 120.
    assert [(r["class"], r["width"]) for r in _rects(root, "bar")] == [("bar pass", "192"), ("bar fail", "72")]
    (line,) = [e.attrib for e in root.iter(f"{SVG}line") if e.attrib.get("class") == "threshold"]
    assert line["x1"] == "280"
    desc = root.find(f"{SVG}desc").text
    assert desc.startswith("Lower is better; threshold 0.5. x: 0.2000 (meets")
    assert desc.endswith("The longer the bar, the lower (better) the value: the axis runs from 1 (left) to 0 (right).")
    ticks = _texts(root, "tick")
    assert ("160", "66", "1") in ticks and ("400", "66", "0") in ticks  # plot bottom 52 + 14
    assert [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "tick direction"] == ["lower is better →"]


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
    points = [_row("A", 0.9, 2.0, 0.004), _row("B", 0.6, 0.5, 0.001),
              _row("C", 0.5, 1.0, 0.002)]
    root = _parse(_svg(points, "share passed"))
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
    # Labels sit 4 px beside and 7.75 px (marker 5.75 + 2) above their point, the baseline a descent
    # (0.26 x 12 px) higher still: y = cy - 10.87. A sits right of 60 % of the plot: its label goes to
    # its upper left. B's upper right would lie on the front's line (from B up to A): upper left too.
    labels = [(t.attrib["x"], t.attrib["y"], t.attrib["text-anchor"], t.text) for t in root.iter(f"{SVG}text")
              if t.attrib.get("class") == "point-label"]
    assert labels[:3] == [("266.61", "46.8", "end", "A"), ("99.65", "129.8", "end", "B"),
                          ("163.3", "157.46", "start", "C")]


def test_tradeoff_svg_draws_only_the_panels_it_has_data_for():
    no_cost = [_row("A", 0.9, 2.0, None), _row("B", 0.6, 0.5, 0.001)]
    root = _parse(_svg(no_cost, "q"))
    assert root.attrib["width"] == "320"
    assert [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "panel-title"] == [
        "Quality vs mean time per answer"]
    assert _svg([_row("A", 0.9, None, None)], "q") is None
    assert _svg([], "q") is None


@pytest.mark.parametrize("draw", [
    lambda name: metric_bars_svg(name, [name], [0.3], threshold=0.5, value_range=(0, 1), fails=[True], leader=name),
    lambda name: pass_fail_svg(name, [name], [{"pass": 1, "fail": 1}], threshold_share=0.5),
    lambda name: _svg([_row(name, 0.5, 1.0, 0.1), _row("b", 0.7, 2.0, 0.2)], name),
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


def _bars(root: ET.Element) -> list[tuple[str, float]]:
    return [(r["class"], float(r["width"])) for r in _rects(root, "bar")]


def test_lower_is_better_without_a_threshold_the_lowest_value_has_the_longest_bar():
    # The quickstart's perplexity (range [1, inf), lower is better, no threshold): the axis runs from
    # hi = 9170.6743 + 0.1 x (9170.6743 - 1) = 10087.64 (left) to 1 (right); a bar is 240 (hi - v) / (hi - 1).
    root = _parse(metric_bars_svg("Perplexity", ["acme", "mistral", "llama"], [290.6237, 324.7102, 9170.6743],
                                  threshold=None, value_range=(1.0, float("inf")), fails=[False] * 3,
                                  higher_is_better=False))
    assert _bars(root) == [("bar neutral", 233.11), ("bar neutral", 232.3), ("bar neutral", 21.82)]
    # No threshold: no side to be on, so neither the pass green nor the fail red.
    assert {r["fill"] for r in _rects(root, "bar")} == {"#54aeff"}
    assert max(_bars(root), key=lambda b: b[1]) == _bars(root)[0]  # the best model's bar is the longest
    ticks = [t for _, _, t in _texts(root, "tick")]
    assert ticks == ["10087.6", "1"]  # worst on the left, best on the right
    assert [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "tick direction"] == ["lower is better →"]


def test_lower_is_better_with_a_threshold_the_best_model_has_the_longest_green_bar():
    # The quickstart's toxicity: range [0, 1], threshold 0.75, lower is better: bars 240 (1 - v).
    root = _parse(metric_bars_svg("Toxicity", ["mistral", "llama", "acme"], [0.0379, 0.0437, 0.0529],
                                  threshold=0.75, value_range=(0.0, 1.0), fails=[False] * 3,
                                  higher_is_better=False))
    assert _bars(root) == [("bar pass", 230.9), ("bar pass", 229.51), ("bar pass", 227.3)]


@pytest.mark.parametrize("higher_is_better", [True, False])
@pytest.mark.parametrize("value_range", [(0.0, 1.0), (0.0, float("inf")), (float("-inf"), 0.0)])
def test_a_longer_bar_is_always_a_better_value(higher_is_better, value_range):
    values = {(0.0, 1.0): [0.1, 0.9, 0.5, 0.3], (0.0, float("inf")): [3.0, 40.0, 0.5, 12.0],
              (float("-inf"), 0.0): [-3.0, -40.0, -0.5, -12.0]}[value_range]
    bars, _, _ = bar_layout(values, value_range, None, higher_is_better)
    by_goodness = sorted(range(4), key=lambda i: values[i], reverse=higher_is_better)
    widths = [bars[i].width for i in by_goodness]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 4
    assert widths[-1] > 0  # the worst model keeps a visible bar where its end of the axis is unbounded
