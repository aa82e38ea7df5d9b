"""The report's first screen and its trade-off chart as a browser draws them (headless Chromium, issue 34).

A quickstart-like report (the quickstart's evaluators that need no model and no judge, on the demo
dataset, with its durations and costs): at 1280 x 800 the first screen holds the headline (title, the
best model, evaluator and problem cards) and the first row of the "At a glance" charts, and the costs
table is not on it. In the Pareto (trade-off) charts no two texts overlap, measured with getBBox()
through each text's transform, and no model's label lies on the front's dashed line. The same holds on
crowded charts with wide and non-Latin names, which checks that the chart's estimate of a text's width
(svg_text.py) is at least what the browser draws.

Needs the ``chromium`` package (``apt-get install chromium``); without it the tests are skipped,
except when ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path

import pytest
import yaml

import sonar_core
from chromium import Browser
from conftest import REPO
from sonar_core import names
from sonar_core.artifacts.html import style
from sonar_core.artifacts.svg_text import Box
from sonar_core.artifacts.charts import tradeoff_svg
from sonar_core.findings.tradeoff import with_fronts
from sonar_core.findings.types import TradeoffRow


def _row(model, quality, seconds, cost):
    """A model's trade-off point as the findings hand it to the chart (fronts set by with_fronts)."""
    return TradeoffRow(model=model, passed=0, checked=0, quality=quality, seconds=seconds, cost=cost)


def _svg(points, quality_label):
    """The chart of ``points``, with the Pareto fronts the findings conclude."""
    return tradeoff_svg(with_fronts(points), quality_label)


WIDTH, HEIGHT = 1280, 800
#: The quickstart's evaluators that need no model, no judge and no network: seconds, not minutes.
FAST = {"text_matching", "pii_leakage", "sensitive_data_leakage", "encoding_guardrail", "factual_knowledge", "bleu",
        "rouge", "classification", "looping_detection", "tool_call_accuracy", "tool_call_f1", "trajectory_match"}

# Every text of every trade-off chart: its class, text, and its getBBox() mapped through getCTM() to
# page coordinates (the four corners, then their bounding box, so the rotated axis label counts
# turned); and each front's points likewise.
_TRADEOFF_JS = """
JSON.stringify(Array.from(document.querySelectorAll('svg.chart-tradeoff')).map(svg => {
  const page = (el, x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y;
                               const q = p.matrixTransform(el.getCTM()); return [q.x, q.y]; };
  return {
    texts: Array.from(svg.querySelectorAll('text')).map(t => {
      const b = t.getBBox();
      const c = [page(t, b.x, b.y), page(t, b.x + b.width, b.y), page(t, b.x, b.y + b.height),
                 page(t, b.x + b.width, b.y + b.height)];
      const xs = c.map(p => p[0]), ys = c.map(p => p[1]);
      return {cls: t.getAttribute('class'), text: t.textContent,
              box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]};
    }),
    fronts: Array.from(svg.querySelectorAll('polyline.front')).map(line =>
      Array.from(line.points).map(p => page(line, p.x, p.y))),
  };
}))
"""


@pytest.fixture(scope="module")
def browser(browser):
    """The session's Chromium (tests/conftest.py) at this module's viewport, given back as it was."""
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=HEIGHT,
                 deviceScaleFactor=1, mobile=False)
    yield browser
    browser.call("Emulation.clearDeviceMetricsOverride", session=True)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SONAR_SCREENSHOT_DIR") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def quickstart_like(tmp_path_factory) -> Path:
    config = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    evaluators = [e for e in config["evaluators"] if isinstance(e, dict) and e.get("id") in FAST]
    assert len(evaluators) == 14  # factual_knowledge twice
    out = tmp_path_factory.mktemp("first_screen")
    result = sonar_core.run(dataset="demo", evaluators=evaluators, output_dir=str(out), run_id="qs", progress=False)
    assert result.status == "success", result.message
    return result.run_dir


def _visible(browser: Browser, selector: str) -> list[dict]:
    """Each element matching ``selector``: its box on the page and whether it lies wholly on the first screen."""
    return json.loads(browser.evaluate(f"""JSON.stringify(Array.from(document.querySelectorAll({json.dumps(selector)}))
      .map(el => {{ const r = el.getBoundingClientRect();
                   return {{top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right,
                            inside: r.top >= 0 && r.bottom <= {HEIGHT} && r.left >= 0 && r.right <= {WIDTH}}}; }}))"""))


def _overlap(a: list[float], b: list[float]) -> float:
    """The area two boxes share (0 when they only touch)."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _assert_tradeoff_clear(browser: Browser) -> int:
    """No two texts of a trade-off chart overlap, no label is on its front's line; returns the texts checked."""
    charts = json.loads(browser.evaluate(_TRADEOFF_JS))
    assert charts
    checked = 0
    for chart in charts:
        texts = chart["texts"]
        for a, b in itertools.combinations(texts, 2):
            assert _overlap(a["box"], b["box"]) == 0, (a, b)
        segments = [(p, q) for line in chart["fronts"] for p, q in zip(line, line[1:])]
        for t in texts:
            if t["cls"] == "point-label":
                assert not any(Box(*t["box"]).crosses(p, q) for p, q in segments), t
        checked += len(texts)
    return checked


def test_the_first_screen_holds_the_headline_and_the_charts(browser, quickstart_like, shots):
    assert browser.load((quickstart_like / names.INDEX_HTML).as_uri()) == []
    browser.screenshot(shots / "first_screen.png")
    for selector in ("h1", "#best-card", ".summary .card"):
        assert all(e["inside"] for e in _visible(browser, selector)), selector
    assert browser.evaluate("document.getElementById('best-model').innerText") == "acme-gpt-large"
    charts = _visible(browser, "#charts figure.chart-card")
    assert len(charts) == 14
    first_row = [c for c in charts if c["top"] == charts[0]["top"]]
    assert len(first_row) == 2 and all(c["inside"] for c in first_row)  # two charts side by side, whole
    # What used to come first is further down: the problems after the charts, the overview after them.
    order = [_visible(browser, s)[0]["top"] for s in ("#charts", "#problems", "#tradeoff", "#overview")]
    assert order == sorted(order)


def test_the_pareto_charts_have_no_overlapping_text(browser, quickstart_like, shots):
    assert browser.load((quickstart_like / names.INDEX_HTML).as_uri()) == []
    browser.evaluate("document.getElementById('tradeoff').scrollIntoView()")
    browser.screenshot(shots / "tradeoff.png")
    labels = json.loads(browser.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('svg.chart-tradeoff text.point-label')).map(t => t.textContent))"))
    # Every model named in both panels (cost and time).
    assert sorted(labels) == sorted(["acme-gpt-large", "llama-3.1-8b-rag", "mistral-7b-chat"] * 2)
    assert _assert_tradeoff_clear(browser) == 2 * (7 + 3)  # per panel: title, 2 + 2 ticks, 2 axis labels; 3 labels


def test_the_agent_demo_leads_with_costs_in_one_line(browser, tmp_path):
    result = sonar_core.run(REPO / "configs" / "agent_demo.yaml", output_dir=str(tmp_path), run_id="a", progress=False)
    assert browser.load((result.run_dir / names.INDEX_HTML).as_uri()) == []
    (line,) = _visible(browser, "#costs-line")
    assert line["inside"]
    assert browser.evaluate("document.getElementById('costs-line').innerText") == (
        "Costs: 9 calls · 0 input and 0 output tokens · no prices set (per host, judge and evaluator)")
    assert not _visible(browser, "#cost-table")[0]["inside"]  # the full table is further down
    assert browser.evaluate("document.getElementById('best-card').innerText").split("\n") == [
        "Model under test", "claims-agent", "one model: no other to rank it against, so no best model overall"]
    assert _visible(browser, "#charts figure.chart-card")[0]["inside"]


_NAMES = ["WWW-MMM-wide-model", "ïñtérnätiönàl-llm", "模型-大型-版本", "gpt-4o-mini-2024-07-18", "Qwen2.5-72B-Instruct",
          "llama-3.1-8b", "mistral-7b-chat", "M", "acme-GPT-LARGE", "phi-3"]


def test_crowded_pareto_charts_have_no_overlapping_text(browser, tmp_path):
    rng = random.Random(34)
    charts = []
    for _ in range(12):
        models = rng.sample(_NAMES, rng.randrange(3, len(_NAMES) + 1))
        points = [_row(m, rng.uniform(0.4, 1.0), rng.uniform(0.05, 3.0), rng.uniform(0.00001, 0.002))
                  for m in models]
        charts.append(str(_svg(points, "q")))
    page = tmp_path / "crowded.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{style()}</style></head><body><main>'
                    + "".join(f"<div>{c}</div>" for c in charts) + "</main></body></html>", encoding="utf-8")
    assert browser.load(page.as_uri()) == []
    assert _assert_tradeoff_clear(browser) > 12 * 2 * 7
