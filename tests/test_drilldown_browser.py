"""The test-case drill-down and the charts as a browser shows them (headless Chromium).

The quickstart's run is opened from file://: a problem's test case link leads to that test
case's page, where the evaluator's verdict for the problem's model is a failure; the
matrix's filters leave exactly the test cases the evaluated datasets say they should. A run
over a dataset with a script payload in every field and key (tests/hostile_run.py) must
hold no executable content in any page, checked on the DOM the browser built.

Screenshots go to $SONAR_SCREENSHOT_DIR when it is set, else to a temporary folder; the
test prints where.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import sonar_core
from chromium import Browser
from hostile_run import everywhere_rows, run_everywhere
from sonar_core import names

PNG = b"\x89PNG\r\n\x1a\n"
#: Attributes whose value the browser would follow or load as a URL.
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "data", "poster", "srcdoc", "background")

_VISIBLE_CASES_JS = """JSON.stringify(Array.from(document.querySelectorAll('#matrix tbody tr'))
  .filter(tr => !tr.hidden).map(tr => tr.querySelector('th.case a').textContent))"""

_DOM_AUDIT_JS = """(() => {
  const all = Array.from(document.querySelectorAll('*'));
  const urlAttributes = %s;
  return JSON.stringify({
    scripts: Array.from(document.scripts).map(s => ({src: s.getAttribute('src'), text: s.textContent})),
    handlers: all.flatMap(el => Array.from(el.attributes).filter(a => a.name.toLowerCase().startsWith('on'))
      .map(a => el.tagName + ' ' + a.name)),
    jsUrls: all.flatMap(el => Array.from(el.attributes)
      .filter(a => urlAttributes.includes(a.name.toLowerCase()) && /^\\s*(javascript|data|vbscript):/i.test(a.value))
      .map(a => el.tagName + ' ' + a.name + '=' + a.value)),
    loaders: Array.from(document.querySelectorAll(
      'img, iframe, frame, object, embed, base, form, link, audio, video, source, foreignObject, meta[http-equiv=refresh]'))
      .map(e => e.tagName),
    csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || '',
    pwned: typeof window.__pwned,
  });
})()""" % json.dumps(list(URL_ATTRIBUTES))


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SONAR_SCREENSHOT_DIR") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def quickstart(quickstart_run):
    """The quickstart's run folder (made once per session, tests/conftest.py; read only)."""
    assert quickstart_run.status == "success", quickstart_run.message
    return quickstart_run.run_dir


def _evaluator_dir(run_dir: Path, label: str) -> Path:
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    (entry,) = [e for e in record["result"]["executed_explainers"] if e["name"] == label]
    return run_dir / entry["job_location"]


def _problems(run_dir: Path, label: str) -> list[dict]:
    path = _evaluator_dir(run_dir, label) / names.PROBLEMS_DIR / names.PROBLEMS_FILE
    return json.loads(path.read_text(encoding="utf-8"))


def _results(run_dir: Path, label: str) -> tuple[list[dict], str]:
    """The evaluated rows of an evaluator and its primary metric key."""
    folder = _evaluator_dir(run_dir, label)
    data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text(encoding="utf-8"))
    (primary,) = [m for m in data["metrics_meta"] if m["is_primary_metric"]]
    return data["results"], primary["key"]


def _verdict_class(browser: Browser, evaluator: str, model: str) -> str:
    """On a case page: the class of the verdict cell of ``evaluator`` for ``model``."""
    return browser.evaluate(f"""(() => {{
      const table = document.getElementById('metrics');
      const models = Array.from(table.querySelectorAll('thead th')).slice(2).map(th => th.textContent);
      const head = Array.from(table.querySelectorAll('tr.ev-head')).find(tr => tr.querySelector('a').textContent === {json.dumps(evaluator)});
      return head.querySelectorAll('th.verdict')[models.indexOf({json.dumps(model)})].className;
    }})()""")


def _select(browser: Browser, select_id: str, label: str | None) -> None:
    """Choose the option labelled ``label`` (None: the first, "all ...") and fire change."""
    found = browser.evaluate(f"""(() => {{
      const select = document.getElementById({json.dumps(select_id)});
      const option = {json.dumps(label)} === null ? select.options[0]
        : Array.from(select.options).find(o => o.textContent === {json.dumps(label)});
      if (!option) return false;
      select.value = option.value;
      select.dispatchEvent(new Event('change'));
      return true;
    }})()""")
    assert found, (select_id, label)


def _check(browser: Browser, checked: bool) -> None:
    browser.evaluate(f"""(() => {{ const box = document.getElementById('f-failing');
      box.checked = {json.dumps(checked)}; box.dispatchEvent(new Event('change')); }})()""")


def test_a_problem_links_to_its_failing_test_case(browser, quickstart, shots):
    index = quickstart / names.INDEX_HTML
    assert browser.load(index.as_uri()) == []
    browser.screenshot(shots / "quickstart-index.png", full_page=True)
    assert (shots / "quickstart-index.png").read_bytes()[:8] == PNG
    # The charts are drawn: one per evaluator, each an accessible image with a title.
    charts = json.loads(browser.evaluate("""JSON.stringify(Array.from(document.querySelectorAll('#charts svg'))
      .map(svg => [svg.getAttribute('role'), svg.querySelector('title').textContent, svg.getBBox().width > 0]))"""))
    # One per evaluator that ran: the judges run only where SmolLM2 is prepared.
    executed = json.loads((quickstart / names.RUN_JSON).read_text())["result"]["executed_explainers"]
    assert len(charts) == len(executed) >= 10 and all(role == "img" and visible for role, _, visible in charts)
    assert charts[0][1] == "Text matching: passing and failing rows per model"
    assert browser.evaluate("document.querySelectorAll('#tradeoff-table tbody tr').length") == 3

    # The first problem of text matching: a model below the threshold, with its failing cases.
    problem = _problems(quickstart, "text_matching")[0]
    model, case = problem["problem_attrs"]["model_name"], problem["problem_attrs"]["test_case_keys"][0]
    assert browser.evaluate("document.querySelector('#ev-text_matching table.problems a.case-link').textContent") == case
    assert browser.follow("#ev-text_matching table.problems a.case-link") == []
    assert browser.evaluate("location.pathname").endswith(f"/{names.CASES_DIR}/{names.case_page_name(case)}")
    assert browser.evaluate("document.getElementById('case-key').textContent") == case
    assert _verdict_class(browser, "Text matching", model) == "verdict fail"
    browser.screenshot(shots / "quickstart-case.png", full_page=True)

    # A flip after a perturbation: its case page shows the original beside the perturbed copy.
    flip = next(p for p in _problems(quickstart, "text_matching") if p["problem_type"] == "robustness")
    attrs = flip["problem_attrs"]
    assert browser.load(index.as_uri()) == []
    link = f"cases/{names.case_page_name(attrs['test_case_keys'][0])}"
    assert browser.follow(f'#ev-text_matching table.problems a.case-link[href="{link}"]') == []
    assert browser.evaluate("document.querySelector('h1 + p a').textContent") == attrs["original_test_case_key"]
    comparison = browser.evaluate(f"""(() => {{
      const heading = Array.from(document.querySelectorAll('#comparison ~ h3'))
        .find(h => h.firstChild.textContent.trim() === {json.dumps(attrs['model_name'])});
      return heading.textContent + ' | ' + heading.nextElementSibling.innerText;
    }})()""")
    # Every metric that flipped is marked, and the heading counts them.
    flips = comparison.count("flip: ")
    assert f"{flips} flip(s)" in comparison and "flip: pass → fail" in comparison
    browser.screenshot(shots / "quickstart-flip.png", full_page=True)

    # The most difficult test case (an insight) links to its page too.
    assert browser.load(index.as_uri()) == []
    assert browser.follow("#ev-text_matching details a.case-link") == []
    assert browser.evaluate("document.getElementById('case-key').textContent") != ""


def test_matrix_filters_leave_the_expected_test_cases(browser, quickstart, shots):
    demo = json.loads(sonar_core.execution.demo_dataset_path().read_text(encoding="utf-8"))["inputs"]
    all_cases = list(dict.fromkeys(r["test_case_key"] for r in demo))
    assert browser.load((quickstart / names.TEST_CASES_HTML).as_uri()) == []
    assert json.loads(browser.evaluate(_VISIBLE_CASES_JS)) == all_cases
    assert browser.evaluate("document.getElementById('f-count').textContent") == "69 of 69 test cases shown"

    # Text matching, mistral-7b-chat, failing only: the cases whose row fails the primary metric.
    results, primary = _results(quickstart, "text_matching")
    failing = [r["test_case_key"] for r in results if r["model_key"] == "mistral-7b-chat" and r[primary] < 0.5]
    assert len(failing) == 12
    _select(browser, "f-ev", "Text matching")
    _select(browser, "f-model", "mistral-7b-chat")
    _check(browser, True)
    assert json.loads(browser.evaluate(_VISIBLE_CASES_JS)) == [c for c in all_cases if c in failing]
    assert browser.evaluate("document.getElementById('f-count').textContent") == "12 of 69 test cases shown"
    columns = json.loads(browser.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('#matrix thead th[data-model]')).filter(th => !th.hidden).map(th => th.textContent))"))
    assert columns == ["mistral-7b-chat"]
    shown = json.loads(browser.evaluate("""JSON.stringify(Array.from(document.querySelectorAll('#matrix li[data-ev]'))
      .filter(li => li.offsetParent !== null).map(li => li.querySelector('.ev').textContent + ' ' + li.className))"""))
    assert shown == ["Text matching fail"] * 12
    browser.screenshot(shots / "quickstart-matrix-filtered.png", full_page=True)

    # Category only: the test cases tagged "factual".
    _select(browser, "f-ev", None)
    _select(browser, "f-model", None)
    _check(browser, False)
    _select(browser, "f-cat", "factual")
    factual = list(dict.fromkeys(r["test_case_key"] for r in demo if "factual" in r.get("categories", [])))
    assert json.loads(browser.evaluate(_VISIBLE_CASES_JS)) == factual
    # A long answer opens in place.
    _select(browser, "f-cat", None)
    opened = browser.evaluate("""(() => { const d = Array.from(document.querySelectorAll('#matrix details'))[0];
      d.querySelector('summary').click(); return d.open && d.innerText.length > d.querySelector('summary').innerText.length; })()""")
    assert opened is True
    browser.screenshot(shots / "quickstart-matrix.png")


def test_hostile_dataset_yields_no_executable_content(browser, tmp_path, shots):
    result = run_everywhere(tmp_path)
    assert result.status == "success", result.message
    run_dir = result.run_dir
    script = (Path(sonar_core.__file__).parent / "templates" / "_filters.js").read_text(encoding="utf-8")
    pages = [run_dir / names.INDEX_HTML, run_dir / names.TEST_CASES_HTML,
             *sorted((run_dir / names.CASES_DIR).iterdir()),
             *sorted(run_dir.glob(f"explainer_*/{names.HTML_FRAGMENT}/text_html/explanation.html"))]
    assert len(pages) == 2 + 3 + len(result.executed)
    models = sorted({r["model_key"] for r in everywhere_rows()})
    for page in pages:
        where = page.relative_to(run_dir)
        assert browser.load(page.as_uri()) == [], where
        if page.name == names.TEST_CASES_HTML:
            # Open every answer and try every filter value: nothing may run.
            browser.evaluate("""(() => {
              document.querySelectorAll('details').forEach(d => { d.open = true; });
              for (const id of ['f-ev', 'f-model', 'f-cat']) {
                const select = document.getElementById(id);
                for (const option of select.options) { select.value = option.value; select.dispatchEvent(new Event('change')); }
                select.value = ''; select.dispatchEvent(new Event('change'));
              }
              const box = document.getElementById('f-failing'); box.checked = true; box.dispatchEvent(new Event('change'));
            })()""")
            browser.screenshot(shots / "hostile-matrix.png", full_page=True)
        audit = json.loads(browser.evaluate(_DOM_AUDIT_JS))
        expected_scripts = [{"src": None, "text": script}] if page.name == names.TEST_CASES_HTML else []
        assert audit["scripts"] == expected_scripts, where
        assert audit["handlers"] == [], where
        assert audit["jsUrls"] == [], where
        assert audit["loaders"] == [], where
        assert audit["pwned"] == "undefined", where
        assert "default-src 'none'" in audit["csp"], where
        if page.parent.name == names.CASES_DIR or page.name == names.TEST_CASES_HTML:
            text = browser.evaluate("document.body.innerText")
            for model in models:
                assert model in text, (where, model)  # shown as text, not interpreted
    browser.screenshot(shots / "hostile-last-page.png")
