"""The comparison page as a browser shows it (headless Chromium, tests/chromium.py).

Two runs built to differ on known rows (tests/compare_runs.py) are compared; the page loads with
no error, lists m1's eight pass -> fail rows, and a flip's A and B links open that test case's page
in run A and in run B, where text matching's verdict for m1 passes and fails respectively.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compare_runs import CASES, build_runs
from sonar_core import names
from sonar_core.cli import cli
from test_drilldown_browser import _verdict_class


def test_a_flip_links_to_both_runs_case_pages(browser, tmp_path):
    before, after = build_runs(tmp_path)
    out = tmp_path / "comparison"
    assert CliRunner().invoke(cli, ["compare", str(before), str(after), "-o", str(out)]).exit_code == 0
    page = (out / names.COMPARISON_HTML).as_uri()
    assert browser.load(page) == []
    assert browser.evaluate("document.getElementById('verdict').textContent").startswith("3 significant regression(s)")
    first = "section.evaluator li.flip.pass-to-fail"
    flipped = json.loads(browser.evaluate(f"""JSON.stringify(Array.from(document.querySelectorAll(
      'section.evaluator h3 + ul.flips')).slice(0, 1).flatMap(ul => Array.from(ul.querySelectorAll('li.pass-to-fail .case'))
      .map(s => s.textContent)))"""))
    assert flipped == CASES[:8]
    for side, run, verdict in (("a", before, "verdict pass"), ("b", after, "verdict fail")):
        assert browser.load(page) == []
        assert browser.follow(f"{first} a.case-{side}") == []
        assert browser.evaluate("location.href") == (run / names.CASES_DIR / names.case_page_name("tc0")).as_uri()
        assert browser.evaluate("document.getElementById('case-key').textContent") == "tc0"
        assert _verdict_class(browser, "Text matching", "m1") == verdict
