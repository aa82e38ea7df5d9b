"""``sonar view`` as a browser shows it (headless Chromium, tests/chromium.py; issue 41 item 2): the runs are
listed, the first page of cases shows, a search and a filter return, a case found by search opens with
its transcript and every evaluator's values, a conversation's turns are shown, a path outside the given
folders is refused, and hostile strings stay text (no script of theirs runs); two runs ticked in the list are
compared (figures and verdicts per metric and model, the flipped rows filtered, a flipped case opened in each
run, runs of different datasets refused in one line), and the cases are sorted by a metric, the sort kept in
the address (tests/view_pair.py's runs, whose flips are known).

A run of 300 rows (100 test cases x 3 models, text_matching) keeps it to seconds; the times to the
first page, to a search result, to a filter result and to a case are printed (``-s`` shows them), not
asserted: bench/bench_view.py measures them on the 1,000,000-row run.

Needs the ``chromium`` package (``apt-get install chromium``); without it the test is skipped, except
when ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

import sonar_core
from chromium import Browser, act, wait_for
from sonar_core.view.server import serve_in_thread
from view_pair import HOSTILE_CASE, write_pair

MODELS = ("m0", "m1", "m2")
CATEGORIES = ("billing", "shipping", "returns")
SCRIPT = "<script>window.pwned = 1</script> q007z"
IMG = '<img src=x onerror="window.pwned = 2"> refund'
QUOTES = "\"double\" 'single' & <b>bold</b>"
TURNS = [{"role": "user", "content": "Where is my parcel? <script>window.pwned = 3</script>"},
         {"role": "assistant", "content": "It ships today."}]


def _answer(t: int, m: str) -> str:
    # m0 always says "refund" (passes text_matching's condition), m1 on even cases, m2 never.
    if (t, m) == (8, "m0"):
        return IMG
    return f"a refund for {t}" if m == "m0" or (m == "m1" and t % 2 == 0) else f"sorry, no {t}"


def _rows() -> list[dict]:
    rows = []
    for t in range(100):
        for m in MODELS:
            rows.append({"test_case_key": f"tc{t:03d}", "model_key": m,
                         "input": SCRIPT if t == 7 else f"question q{t:03d}z",
                         "expected_output": QUOTES if t == 9 else f"expected {t}", "actual_output": _answer(t, m),
                         "context": [f"context of {t}", "second chunk"], "categories": [CATEGORIES[t % 3]],
                         "output_condition": '"refund"'})
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("view")
    reports = root / "reports"
    big = sonar_core.run({"dataset": str(_write(root / "rows.jsonl", _rows())), "evaluators": ["text_matching"],
                          "output_dir": str(reports), "run_id": "big"})
    conv = sonar_core.run({"dataset": str(_write(root / "conv.jsonl", [
        {"test_case_key": "chat-1", "model_key": "agent", "conversation": TURNS, "expected_tool_calls": []}])),
        "evaluators": ["tool_call_accuracy"], "output_dir": str(reports), "run_id": "conv"})
    secret = sonar_core.run({"dataset": str(root / "rows.jsonl"), "evaluators": ["text_matching"],
                             "output_dir": str(root / "outside"), "run_id": "secret"})
    assert (big.status, conv.status, secret.status) == ("success", "success", "success"), \
        (big.message, conv.message, secret.message)
    server = serve_in_thread([reports])
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


CASES_READY = "document.getElementById('cases').dataset.ready === '1'"
CASE_READY = "document.getElementById('case').dataset.ready === '1'"
KEYS = "JSON.stringify(Array.from(document.querySelectorAll('#cases tbody a.case')).map(a => a.textContent))"


def _search(browser: Browser, **fields) -> float:
    """Fill the run's search and filter fields (others emptied), press Search; seconds to the answer shown."""
    values = {"q": "", "model": "", "category": "", "evaluator": "", "metric": "", "min": "", "max": "", **fields}
    script = "".join(f"document.getElementById({json.dumps(k)}).value = {json.dumps(v)};" for k, v in values.items())
    return act(browser, script + "document.getElementById('go').click()", CASES_READY)


def _count(browser: Browser) -> str:
    return browser.evaluate("document.getElementById('count').textContent")


def test_runs_first_page_search_filter_and_case(served, browser):
    started = time.perf_counter()
    assert browser.load(served + "/") == []
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'")
    listed = time.perf_counter() - started
    runs = json.loads(browser.evaluate("JSON.stringify(Array.from(document.querySelectorAll('#runs a.run'))"
                                       ".map(a => a.textContent))"))
    assert runs == ["big", "conv"]  # "secret" is outside the given folder

    first = act(browser, "Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === 'big').click()",
                CASES_READY)
    first_page = time.perf_counter() - started
    assert _count(browser) == "300 rows"
    keys = json.loads(browser.evaluate(KEYS))
    assert len(keys) == 50 and keys[:4] == ["tc000::m0", "tc000::m1", "tc000::m2", "tc001::m0"]
    # The filters offered come from the run: its evaluator's metrics and the dataset's categories.
    wait_for(browser, "document.getElementById('category').length === 4")
    assert browser.evaluate("Array.from(document.getElementById('category').options).map(o => o.value).join()") == \
        ",billing,returns,shipping"

    search = _search(browser, q="Q017Z")
    assert json.loads(browser.evaluate(KEYS)) == ["tc017::m0", "tc017::m1", "tc017::m2"]
    # Passing rows (model_passes >= 1) of shipping cases (t % 3 == 1): m0's 33 and m1's even ones.
    expected = sum(1 for t in range(100) if t % 3 == 1 for m in MODELS if "refund" in _answer(t, m))
    browser.evaluate("document.getElementById('evaluator').value = 'text_matching';"
                     "document.getElementById('evaluator').dispatchEvent(new Event('change'))")
    filtered = _search(browser, category="shipping", evaluator="text_matching", metric="model_passes", min="1")
    assert expected == 49 and _count(browser) == "49 rows"
    assert json.loads(browser.evaluate(KEYS))[:3] == ["tc001::m0", "tc004::m0", "tc004::m1"]

    _search(browser, q="q017z", model="m2")
    opened = act(browser, "document.querySelector('#cases a.case').click()", CASE_READY)
    fields = json.loads(browser.evaluate("JSON.stringify(Object.fromEntries(Array.from("
                                         "document.querySelectorAll('#fields dd')).map(d => [d.dataset.field, d.textContent])))"))
    assert fields["key"] == "tc017::m2" and fields["input"] == "question q017z"
    assert fields["actual_output"] == "sorry, no 17" and fields["expected_output"] == "expected 17"
    assert fields["context"] == "context of 17\n\nsecond chunk" and fields["categories"] == "returns"
    scores = browser.evaluate("Array.from(document.querySelectorAll('#scores tbody td')).map(td => td.textContent)")
    assert scores[0] == "text_matching" and "model_passes = 0" in scores[1].split("\n")
    assert scores[2].startswith("condition part '\"refund\"' did not match the actual answer")
    print(f"\nsonar view, 300 rows: runs listed {listed * 1000:.0f} ms, first page {first_page * 1000:.0f} ms "
          f"(after the click {first * 1000:.0f} ms), search {search * 1000:.0f} ms, filter {filtered * 1000:.0f} ms, "
          f"case {opened * 1000:.0f} ms")
    assert browser.errors() == []


def test_a_conversation_shows_its_turns(served, browser):
    assert browser.load(served + "/") == []
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'")
    act(browser, "Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === 'conv').click()",
        CASES_READY)
    act(browser, "document.querySelector('#cases a.case').click()", CASE_READY)
    turns = browser.evaluate("Array.from(document.querySelectorAll('#turns .turn')).map(d => d.textContent)")
    assert turns == ["user: Where is my parcel? <script>window.pwned = 3</script>", "assistant: It ships today."]
    assert browser.evaluate("document.querySelectorAll('#case script').length") == 0
    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert browser.evaluate("Array.from(document.querySelectorAll('#scores tbody tr td:first-child'))"
                            ".map(td => td.textContent).join()") == "tool_call_accuracy"


def test_hostile_strings_stay_text(served, browser):
    assert browser.load(served + "/") == []
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'")
    act(browser, "Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === 'big').click()",
        CASES_READY)  # rows of tc007 (a script), tc008 (an img with onerror) and tc009 (quotes) are on page 1
    cells = browser.evaluate("Array.from(document.querySelectorAll('#cases tbody td')).map(td => td.textContent)")
    assert SCRIPT in cells and IMG in cells and QUOTES in cells
    assert browser.evaluate("document.querySelectorAll('#cases img, #cases script, #cases b').length") == 0
    _search(browser, q="q007z")
    act(browser, "document.querySelector('#cases a.case').click()", CASE_READY)
    assert browser.evaluate("document.querySelector('#fields dd[data-field=input]').textContent") == SCRIPT
    _search(browser, q="onerror")
    act(browser, "document.querySelector('#cases a.case').click()", CASE_READY)
    assert browser.evaluate("document.querySelector('#fields dd[data-field=actual_output]').textContent") == IMG
    assert browser.evaluate("document.querySelectorAll('#case img, #case script').length") == 0
    assert browser.evaluate("typeof window.pwned") == "undefined"  # neither payload ran
    assert browser.errors() == []


def _status(browser: Browser, path: str) -> list:
    found = browser.call("Runtime.evaluate", session=True, awaitPromise=True, returnByValue=True,
                         expression=f"fetch({json.dumps(path)}).then(async r => [r.status, await r.text()])")
    return found["result"]["value"]


def test_paths_outside_the_folders_are_refused(served, browser):
    assert browser.load(served + "/") == []
    not_found = '{"error": "not found"}'
    assert _status(browser, "/api/runs/secret/cases") == [404, not_found]
    assert _status(browser, "/api/runs/..%2F..%2Foutside%2Fsecret/cases") == [404, not_found]
    assert _status(browser, "/api/runs/big/..%2F..%2F..%2Fetc%2Fpasswd") == [404, not_found]
    assert _status(browser, "/../../etc/passwd") == [404, not_found]
    assert _status(browser, "/api/runs/big/case?key=..%2F..%2Fetc%2Fpasswd") == \
        [404, '{"error": "no row \'../../etc/passwd\' in run big"}']


@pytest.fixture(scope="module")
def pair_served(tmp_path_factory):
    server = serve_in_thread([write_pair(tmp_path_factory.mktemp("pair"), hostile=True)])
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


CMP_READY = "document.getElementById('cmp').dataset.ready === '1'"
FLIPS_READY = "document.getElementById('flips').dataset.ready === '1'"


def _compare(browser: Browser, base: str, a: str, b: str) -> float:
    """Open the page, tick runs ``a`` and ``b``, press Compare; seconds from the press to the comparison shown."""
    assert browser.load("about:blank") == [] and browser.load(base + "/") == []
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'")
    browser.evaluate(f"for (const box of document.querySelectorAll('#runs input.pick')) "
                     f"if ([{json.dumps(a)}, {json.dumps(b)}].includes(box.value)) box.click()")
    return act(browser, "document.getElementById('compare').click()", CMP_READY)


def _table(browser: Browser, selector: str) -> list[list[str]]:
    return browser.evaluate(f"Array.from(document.querySelectorAll({json.dumps(selector + ' tbody tr')}))"
                            ".map(tr => Array.from(tr.cells).map(td => td.textContent))")


def test_two_runs_compared_flips_filtered_and_opened(pair_served, browser):
    shown = _compare(browser, pair_served, "rb", "ra")  # ticked in either order: A is the older run
    assert browser.evaluate("document.getElementById('cmptitle').textContent") == "ra (A) \u2192 rb (B)"
    assert browser.evaluate("document.getElementById('cmpmsg').textContent") == ""
    assert browser.evaluate("location.hash") == "#a=ra&b=rb"
    rows = {(r[1], r[2]): r for r in _table(browser, "#metrics")}
    # m2 passed 12/12 in A, 2/12 in B: exact McNemar p = 2 * 0.5^10 = 0.0020, Holm over six tests 0.0117.
    assert rows[("Model passes", "m2")][3:] == ["1.0000 [0.7575, 1.0000] n=12", "0.1667 [0.0470, 0.4480] n=12",
                                                 "-0.8333", "mcnemar-exact, n=12, p=0.0020 (0.0117 holm)", "worse", "10", "0"]
    assert rows[("Model passes", "m1")][5:] == ["+0.0000", "mcnemar-exact, n=12, p=1.0000 (1.0000 holm)", "same", "1", "1"]
    assert browser.evaluate("document.querySelector('#metrics tbody tr.worse').cells[2].textContent") == "m2"
    assert browser.evaluate("document.getElementById('fcount').textContent") == "36 flipped rows"

    browser.evaluate("document.getElementById('fmetric').value = 'model_passes';"
                     "document.getElementById('fmodel').value = 'm2';"
                     "document.getElementById('fdirection').value = 'pass_to_fail'")
    filtered = act(browser, "document.getElementById('fgo').click()", FLIPS_READY)
    assert browser.evaluate("document.getElementById('fcount').textContent") == "10 flipped rows"
    flips = _table(browser, "#flips")
    assert [f[4] for f in flips] == ["tc00", "tc01", "tc02", HOSTILE_CASE, "tc04", "tc05", "tc06", "tc07", "tc08", "tc09"]
    assert flips[1] == ["text_matching", "model_passes", "m2", "pass \u2192 fail", "tc01", "tc01::m2", "tc01::m2"]
    browser.evaluate("document.getElementById('fdirection').value = 'fail_to_pass';"
                     "document.getElementById('fmodel').value = ''")
    act(browser, "document.getElementById('fgo').click()", FLIPS_READY)
    assert [f[2:5] for f in _table(browser, "#flips")] == [["m1", "fail \u2192 pass", "tc11"]]

    # A flipped case opens in each run: passing in A, failing in B.
    browser.evaluate("document.getElementById('fdirection').value = 'pass_to_fail';"
                     "document.getElementById('fmodel').value = 'm2'")
    act(browser, "document.getElementById('fgo').click()", FLIPS_READY)
    opened = act(browser, "document.querySelectorAll('#flips a.case-b')[1].click()", CASE_READY)
    assert browser.evaluate("document.getElementById('casekey').textContent") == "rb: tc01::m2"
    assert browser.evaluate("document.querySelector('#fields dd[data-field=actual_output]').textContent") == "sorry, no 1"
    act(browser, "document.querySelectorAll('#flips a.case-a')[1].click()", CASE_READY)
    assert browser.evaluate("document.getElementById('casekey').textContent") == "ra: tc01::m2"
    assert browser.evaluate("document.querySelector('#fields dd[data-field=actual_output]').textContent") == "a refund for 1"
    scores = browser.evaluate("Array.from(document.querySelectorAll('#scores tbody td')).map(td => td.textContent)")
    assert "model_passes = 1" in scores[1].split("\n")

    # The hostile test case key stays text, in the flips and on its case page, and its script never runs.
    assert browser.evaluate("document.querySelectorAll('#flips img, #cmp img, #case img').length") == 0
    act(browser, "document.querySelectorAll('#flips a.case-a')[3].click()", CASE_READY)
    assert browser.evaluate("document.querySelector('#fields dd[data-field=test_case_key]').textContent") == HOSTILE_CASE
    assert browser.evaluate("document.querySelectorAll('#case img, #flips img').length") == 0
    assert browser.evaluate("typeof window.pwned") == "undefined"
    # The address keeps the comparison: a reload shows it again.
    assert browser.load("about:blank") == [] and browser.load(pair_served + "/#a=ra&b=rb") == []
    wait_for(browser, CMP_READY)
    assert browser.evaluate("document.getElementById('fcount').textContent") == "36 flipped rows"
    print(f"\nsonar view, 24-row pair: comparison shown {shown * 1000:.0f} ms, flips filtered {filtered * 1000:.0f} ms, "
          f"case {opened * 1000:.0f} ms")
    assert browser.errors() == []


def test_runs_of_different_datasets_are_refused_in_one_line(pair_served, browser):
    _compare(browser, pair_served, "ra", "rc")
    assert browser.evaluate("document.getElementById('cmpmsg').textContent") == (
        "ra and rc cannot be compared: the runs share no test case (A has 12, B 3): nothing to compare "
        "(--allow-partial writes the comparison anyway, saying so)")
    assert browser.evaluate("document.querySelectorAll('#metrics tbody tr, #flips tbody tr').length") == 0
    browser.evaluate("for (const box of document.querySelectorAll('#runs input.pick:checked')) box.click();"
                     "document.querySelector('#runs input.pick').click(); document.getElementById('compare').click()")
    assert browser.evaluate("document.getElementById('pickmsg').textContent") == "tick two runs (1 ticked)"


def test_cases_sorted_by_a_metric_and_the_sort_kept_in_the_address(pair_served, browser):
    assert browser.load("about:blank") == [] and browser.load(pair_served + "/") == []
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'")
    act(browser, "Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === 'rb').click()",
        CASES_READY)
    assert json.loads(browser.evaluate(KEYS))[0] == f"{HOSTILE_CASE}::m1"  # by key: '<' sorts before 't'
    wait_for(browser, "Array.from(document.getElementById('sort').options).some(o => o.value === 'text_matching.model_passes')")
    first = "Array.from(document.querySelector('#cases tbody tr').cells).map(td => td.textContent)"

    def sort(order: str, model: str = "") -> list[str]:
        act(browser, "document.getElementById('sort').value = 'text_matching.model_passes';"
                     f"document.getElementById('order').value = '{order}';"
                     f"document.getElementById('model').value = '{model}'; document.getElementById('go').click()",
            CASES_READY)
        return browser.evaluate(first)

    # In B, m1 fails tc00 only and m2 passes tc10 and tc11 only: failing rows first ascending, by key.
    assert [sort("asc")[i] for i in (0, 5)] == [f"{HOSTILE_CASE}::m2", "0"]
    assert [sort("desc")[i] for i in (0, 5)] == [f"{HOSTILE_CASE}::m1", "1"]
    assert [sort("desc", "m2")[i] for i in (0, 5)] == ["tc10::m2", "1"]
    assert json.loads(browser.evaluate(KEYS))[:3] == ["tc10::m2", "tc11::m2", f"{HOSTILE_CASE}::m2"]
    address = browser.evaluate("location.hash")
    assert "sort=text_matching.model_passes" in address and "order=desc" in address and "model=m2" in address
    # A reload of that address shows the same sorted page.
    assert browser.load("about:blank") == [] and browser.load(pair_served + "/" + address) == []
    wait_for(browser, "document.getElementById('run').hidden === false && " + CASES_READY)
    assert json.loads(browser.evaluate(KEYS))[:3] == ["tc10::m2", "tc11::m2", f"{HOSTILE_CASE}::m2"]
    assert browser.evaluate("document.getElementById('sort').value") == "text_matching.model_passes"
    assert browser.evaluate("document.querySelectorAll('#cases img').length") == 0
    assert browser.errors() == []
