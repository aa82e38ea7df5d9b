"""An untrusted judge's verdicts as a browser shows them (headless Chromium, tests/chromium.py): never a
pass or a fail, always "not counted", or "not scored" when its rows were not scored (issue 34).

Two runs of one dataset (three models, three test cases) with two evaluators: ``text_matching`` (no
judge: its failures are real, drawn "✗ fail") and the fixture plugin's ``toy_judge``, whose scripted
judge always answers "no", so it fails its calibration (kappa 0). The default run does not score
toy_judge; the other scores it with ``score_untrusted`` (every verdict a "fail" the judge gave).
The pages are read at 800 CSS pixels wide, where the matrix's cells are narrow.

Needs the ``chromium`` package (``apt-get install chromium``); without it the test is skipped, except
when ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sonar_core
from judge_server import JudgeServer, write_llm_configs
from sonar_core import names

HERE = Path(__file__).parent
MODELS = ("alpha", "beta", "gamma")
RED = "rgb(130, 7, 30)"  # the fail colour (#82071e, _style.css)


def _dataset(tmp_path: Path) -> Path:
    rows = []
    for case in ("c1", "c2", "c3"):
        for model in MODELS:
            # alpha and beta say "Paris", gamma does not: text_matching fails gamma's rows only.
            answer = f"Paris is the answer to {case}" if model != "gamma" else f"No idea about {case}"
            rows.append({"test_case_key": case, "model_key": model, "input": f"Capital question {case}",
                         "actual_output": answer, "output_condition": '"Paris"'})
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The default run (toy_judge not scored) and the score_untrusted one."""
    folder = tmp_path_factory.mktemp("untrusted")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.syspath_prepend(str(HERE / "core"))
    try:
        with JudgeServer(default="no") as server:
            settings = {"dataset": str(_dataset(folder)), "evaluators": ["text_matching", "toy_judge"],
                        "plugins": ["calibration_judge_plugin"], "output_dir": str(folder / "out"),
                        "llm_configs": str(write_llm_configs(folder / "llm.yaml", server.base_url)),
                        "llm_cache": str(folder / "cache.sqlite")}
            default = sonar_core.run(run_id="default", **settings)
            scored = sonar_core.run(run_id="scored", score_untrusted=True, **settings)
    finally:
        monkeypatch.undo()
    assert default.exit_code == 0 and scored.exit_code == 0, (default.message, scored.message)
    return {"default": default.run_dir, "scored": scored.run_dir}


@pytest.fixture(scope="module")
def browser(browser):
    """The session's Chromium (tests/conftest.py) at this module's viewport, given back as it was."""
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=800, height=1400, deviceScaleFactor=1,
                 mobile=False)
    yield browser
    browser.call("Emulation.clearDeviceMetricsOverride", session=True)


# Every verdict chip of the matrix: its evaluator, class, text, colour, weight and whether it is cut off.
_CHIPS_JS = """
JSON.stringify(Array.from(document.querySelectorAll('#matrix li[data-ev]')).map(li => {
  const b = li.querySelector('b'), style = getComputedStyle(li);
  return {ev: li.querySelector('.ev').innerText, cls: li.className, text: b.innerText, color: style.color,
          weight: getComputedStyle(b).fontWeight, title: li.title,
          cut: li.scrollWidth > li.clientWidth + 1 || b.getBoundingClientRect().right > li.getBoundingClientRect().right + 1};
}))
"""

# The case page's verdict line per evaluator, and the classes of its metric cells.
_CASE_JS = """
JSON.stringify(Array.from(document.querySelectorAll('#metrics tr.ev-head')).map(tr => {
  const cells = [];
  for (let row = tr.nextElementSibling; row && !row.classList.contains('ev-head'); row = row.nextElementSibling)
    Array.from(row.querySelectorAll('td')).slice(2).forEach(td => cells.push(td.className));
  return {ev: tr.querySelector('a').innerText,
          heads: Array.from(tr.querySelectorAll('th.verdict')).map(th => ({cls: th.className, text: th.innerText,
                                                                          color: getComputedStyle(th).color})),
          cells: cells};
}))
"""

_SHOWN_JS = "document.getElementById('f-count').innerText"


def _toy(run_dir: Path) -> Path:
    (folder,) = [p for p in run_dir.iterdir() if p.name.startswith("explainer_calibration_judge_plugin_")]
    return folder


@pytest.mark.parametrize(("run", "cls", "text"), [
    ("default", "not-scored", "not scored (untrusted judge)"),
    ("scored", "not-counted", "not counted (untrusted judge)"),
])
def test_an_untrusted_judges_verdicts_are_never_drawn_as_a_pass_or_a_fail(runs, browser, run, cls, text):
    run_dir = runs[run]
    assert browser.load((run_dir / names.TEST_CASES_HTML).as_uri()) == []
    chips = json.loads(browser.evaluate(_CHIPS_JS))
    toy = [c for c in chips if c["ev"] == "Toy judge"]
    matching = [c for c in chips if c["ev"] != "Toy judge"]
    assert len(toy) == 9 and len(matching) == 9  # three test cases, three models
    for chip in toy:
        assert (chip["cls"], chip["text"]) == (cls, text), chip
        assert chip["color"] != RED and chip["weight"] == "400", chip
        assert not chip["cut"], chip  # the whole text shows, however narrow the cell
        assert "fail" not in chip["text"]
    # The judge's word is kept where it is asked for (the tooltip), marked as not counted.
    if run == "scored":
        assert all("not counted: the judge failed its calibration (it said fail" in c["title"] for c in toy)
    # The evaluator without a judge draws its verdicts as usual: gamma fails, in red.
    assert sorted(c["text"] for c in matching) == ["✓ pass"] * 6 + ["✗ fail"] * 3
    assert {c["color"] for c in matching if c["cls"] == "fail"} == {RED}
    # "failing only" keeps the test cases with a real failure: all three by text_matching, none by the judge.
    browser.evaluate("document.getElementById('f-ev').value = '1'; document.getElementById('f-ev')"
                     ".dispatchEvent(new Event('change')); document.getElementById('f-failing').click()")
    assert browser.evaluate(_SHOWN_JS) == "0 of 3 test cases shown"
    browser.evaluate("document.getElementById('f-ev').value = '0'; document.getElementById('f-ev')"
                     ".dispatchEvent(new Event('change'))")
    assert browser.evaluate(_SHOWN_JS) == "3 of 3 test cases shown"

    # The case page: the verdict line says so for every model, and no metric cell is green or red.
    assert browser.follow('#matrix a[href^="cases/"]') == []
    lines = {line["ev"]: line for line in json.loads(browser.evaluate(_CASE_JS))}
    assert [(h["cls"], h["text"]) for h in lines["Toy judge"]["heads"]] == [(f"verdict {cls}", text)] * 3
    assert all(h["color"] != RED for h in lines["Toy judge"]["heads"])
    assert not {"pass", "fail", "num pass", "num fail"} & set(lines["Toy judge"]["cells"])
    assert [h["text"] for h in lines["Text matching"]["heads"]] == ["✓ pass", "✓ pass", "✗ fail"]

    # The evaluator's page: "Weakest answers" lists none of the judge's verdicts and says why.
    page = _toy(run_dir) / names.HTML_FRAGMENT / "text_html" / "explanation.html"
    assert browser.load(page.as_uri()) == []
    weakest = browser.evaluate("document.querySelector('[data-not-counted]').innerText")
    assert weakest.startswith("Not scored: judge test-judge is untrusted" if run == "default"
                              else "Not counted: judge test-judge is untrusted")
    assert browser.evaluate("document.querySelectorAll('table.worst').length") == 0
    assert browser.evaluate("document.querySelectorAll('table.leaderboard td.fail, table.leaderboard td.pass')"
                            ".length") == 0

    # index.html: the chart's tag is whole, and the overview colours no value of the judge's.
    assert browser.load((run_dir / names.INDEX_HTML).as_uri()) == []
    tag = json.loads(browser.evaluate(
        "(() => { const s = document.querySelector('#charts a[href=\"#ev-toy_judge\"]').parentElement"
        ".querySelector('.judge-trust'); const f = s.closest('figure').getBoundingClientRect(),"
        " r = s.getBoundingClientRect(); return JSON.stringify({text: s.innerText, "
        "cut: s.scrollWidth > s.clientWidth + 1 || r.right > f.right + 1 || r.width === 0}); })()"))
    assert tag == {"text": "not scored: untrusted judge" if run == "default" else "untrusted judge: verdicts not counted",
                   "cut": False}
    overview = json.loads(browser.evaluate(
        "JSON.stringify(Array.from(document.querySelector('#overview a[href=\"#ev-toy_judge\"]').closest('tr')"
        ".querySelectorAll('td.num')).map(td => td.className.trim()))"))
    assert overview == ["num"] * 3
