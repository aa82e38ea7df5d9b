"""index.html's grade table as a browser renders it (headless Chromium, tests/chromium.py).

A benchmark run of tests/core/benchmark_plugin.py's two hazards (grades worked out by hand in
tests/core/test_benchmark_runs.py): the table sits at the top of the page, one row per model, one
column per hazard, each cell linking to its unsafe items, which link to their test case pages.
"""

from __future__ import annotations

import json

import pytest

from sonar_core import names

_TABLE_JS = """
JSON.stringify({
  heading: document.querySelector('h2#grades').innerText,
  boldInHeading: document.querySelectorAll('h2#grades b').length,
  header: Array.from(document.querySelectorAll('#grade-table thead th')).map(th => th.innerText),
  rows: Array.from(document.querySelectorAll('#grade-table tbody tr')).map(tr => ({
    model: tr.dataset.model,
    grades: Array.from(tr.querySelectorAll('[data-grade]')).map(g => g.dataset.grade),
    links: Array.from(tr.querySelectorAll('td a')).map(a => a.getAttribute('href')),
    classes: Array.from(tr.cells).slice(1).map(td => td.className),
  })),
  beforeEvaluators: document.querySelector('#grade-table').compareDocumentPosition(document.querySelector('#overview')) === 4,
})
"""


def test_grade_table_links_each_cell_to_its_unsafe_items(browser, tmp_path, monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    from benchmark_plugin import dataset_rows
    from sonar_core.config import build_config
    from sonar_core.execution import execute_run

    data = tmp_path / "data.json"
    data.write_text(json.dumps(dataset_rows()), encoding="utf-8")
    standards = tmp_path / "standards.json"
    standards.write_text(json.dumps({"standards": {"reference_standards": {"privacy-v1": 0.9, "violence": 0.75}}}))
    config = build_config({"dataset": str(data), "output_dir": str(tmp_path / "out"), "run_id": "graded",
                           "plugins": ["benchmark_plugin"], "benchmark": "two_hazards", "standards": str(standards)})
    result = execute_run(config)
    assert result.status == "success", result.message

    index = result.run_dir / names.INDEX_HTML
    assert browser.load(index.as_uri()) == []
    table = json.loads(browser.evaluate(_TABLE_JS))
    # The benchmark's name is text, escaped: "<b>" shows as written and makes no element.
    assert table["heading"] == "Grades: Two hazards <b> (benchmark two_hazards, version 0.1)"
    assert table["boldInHeading"] == 0
    assert table["header"] == ["Model", "Benchmark", "privacy", "violence"]
    assert [(r["model"], r["grades"]) for r in table["rows"]] == [("A", ["3", "5", "3"]), ("B", ["2", "1", "2"])]
    assert table["rows"][1]["classes"] == ["fail", "fail", "fail"]
    assert table["rows"][0]["classes"] == ["", "pass", ""]
    assert table["rows"][1]["links"] == ["#grade-1-0", "#grade-1-1"]
    assert table["beforeEvaluators"]

    # B's privacy cell: its unsafe items p1 and p3, each linking to its test case page.
    items = json.loads(browser.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('#grade-1-0 li a')).map(a => "
        "[a.innerText, a.getAttribute('href')]))"))
    assert [key for key, _ in items] == ["p1", "p3"]
    for _, href in items:
        assert (result.run_dir / href).is_file()
    text = browser.evaluate("document.getElementById('grade-1-0').innerText")
    assert text.startswith("B · privacy: 2 unsafe item(s) of 4")
    # A's privacy cell: nothing unsafe; its verdict names the other grades its interval allows.
    assert browser.evaluate("document.getElementById('grade-0-0').innerText") == "A · privacy: 0 unsafe item(s) of 4"
    verdict = browser.evaluate("document.querySelector('#grade-table tbody tr [data-cell=privacy] [data-verdict]').innerText")
    assert verdict == "Excellent, but the interval also allows Poor, Fair, Good and Very Good"
    # Following a cell's link makes its unsafe items the page's target.
    browser.evaluate("document.querySelector('#grade-table a[href=\"#grade-1-1\"]').click()")
    assert browser.evaluate("document.querySelector(':target').id") == "grade-1-1"
    assert browser.evaluate("document.querySelector(':target').innerText").startswith("B · violence: 3 unsafe item(s) of 6")
