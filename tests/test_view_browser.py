"""``sonar view`` as a browser shows it (headless Chromium, tests/chromium.py; issue 41 item 2): the runs are
listed, the first page of cases shows, a search and a filter return, a case found by search opens with
its transcript and every evaluator's values, a conversation's turns are shown, a path outside the given
folders is refused, and hostile strings stay text (no script of theirs runs).

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
from chromium import Browser, act, chromium_binary, wait_for
from sonar_core.view.server import serve_in_thread

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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chromium")
    instance = Browser(chromium_binary(), folder / "profile", folder / "chromium.log")
    yield instance
    instance.close()


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
