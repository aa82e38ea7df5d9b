"""index.html and the evaluator fragments as a browser renders them (headless Chromium).

The browser (tests/chromium.py) is driven over the DevTools protocol. A canary page with a
deliberate error shows that console errors are captured.

Needs the ``chromium`` package (``apt-get install chromium``); without it the test is
skipped, except when ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import json

import pytest

from hostile_run import MODELS
from sonar_core import names


# Per leaderboard table: the section heading, the evaluator id and the rendered cells.
_LEADERBOARDS_JS = """
JSON.stringify(Array.from(document.querySelectorAll('table.leaderboard')).map(t => ({
  evaluator: t.dataset.evaluator,
  heading: t.closest('section, main').querySelector('h2, h1').innerText,
  header: Array.from(t.querySelectorAll('thead th')).map(th => th.innerText),
  rows: Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(td => td.innerText)),
})))
"""


def test_capture_sees_console_errors(browser, tmp_path):
    """The canary: a script error and a missing image must both be reported."""
    canary = tmp_path / "canary.html"
    canary.write_text('<!DOCTYPE html><html><body><p>canary</p><img src="missing.png">'
                      '<script>console.error("canary error"); undefinedFunction();</script></body></html>',
                      encoding="utf-8")
    errors = browser.load(canary.as_uri())
    assert any("canary error" in e for e in errors), errors
    assert any(e.startswith("Uncaught ReferenceError") for e in errors), errors
    assert any("missing.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors), errors


def test_index_html_renders_every_leaderboard(browser, tmp_path, hostile_result):
    result = hostile_result  # tests/hostile_run.py's run, made once per session (tests/conftest.py)
    assert result.status == "success", result.message
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    executed = record["result"]["executed_explainers"]
    assert executed

    errors = browser.load((result.run_dir / names.INDEX_HTML).as_uri())
    assert errors == []
    browser.screenshot(tmp_path / "index.png")
    assert (tmp_path / "index.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    text = browser.evaluate("document.body.innerText")
    for model in MODELS:
        assert model in text, model  # escaped in the source, shown verbatim
    assert browser.evaluate("document.querySelectorAll('script').length") == 0
    # The stylesheet applies: the body font is the sans-serif stack, not the serif default.
    assert "Helvetica" in browser.evaluate("getComputedStyle(document.body).fontFamily")
    assert browser.evaluate("document.getElementById('best-model').innerText") == record["result"]["overall_result"]["best_model"]

    tables = {t["evaluator"]: t for t in json.loads(browser.evaluate(_LEADERBOARDS_JS))}
    assert sorted(tables) == sorted(e["evaluator_id"] for e in executed)
    links = {e["evaluator_id"]: browser.evaluate(f"document.querySelector('#ev-{e['evaluator_id']} a').getAttribute('href')")
             for e in executed}
    for entry in executed:
        folder = result.run_dir / entry["job_location"]
        descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text(encoding="utf-8"))
        board_dir = folder / (names.BOOL_LEADERBOARD if descriptor["result_kind"] == "bool" else names.HEATMAP_LEADERBOARD)
        board = json.loads((board_dir / "application_json" / "leaderboard_0.json").read_text(encoding="utf-8"))
        table = tables[entry["evaluator_id"]]
        assert table["heading"] == descriptor["display_name"]
        assert table["header"][:2] == ["Rank", "LLM"]
        rendered = [(row[0], row[1]) for row in table["rows"]]
        assert rendered == [(str(n), model) for n, model in enumerate(board["ranking"], start=1)]
        assert rendered[0][0] == "1" and sorted(m for _, m in rendered) == sorted(MODELS)

        # The evaluator's own report opens from its link, without errors, with its leaderboard.
        fragment = result.run_dir / links[entry["evaluator_id"]]
        assert fragment.is_file(), links[entry["evaluator_id"]]
        assert browser.load(fragment.as_uri()) == []
        fragment_tables = json.loads(browser.evaluate(_LEADERBOARDS_JS))
        assert [t["heading"] for t in fragment_tables] == [descriptor["display_name"]]
        assert [row[1] for row in fragment_tables[0]["rows"]] == board["ranking"]
