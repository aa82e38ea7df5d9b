"""``sonar view``'s JSON API against a real server on 127.0.0.1: the runs, paging, search, filters, a path
outside the given folders refused, hostile strings kept as data (issue 41 item 2)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("duckdb")

import sonar_core
from sonar_core.view import queries
from sonar_core.view.page import PAGE
from sonar_core.view.server import serve_in_thread

HOSTILE = '<img src=x onerror="alert(1)">'


def _rows():
    rows = []
    for t in range(5):
        for m in ("m1", "m2"):
            answer = "refund granted" if m == "m1" else f"no {t}"
            rows.append({"test_case_key": f"tc{t}", "model_key": m, "input": HOSTILE if t == 4 else f"question {t}",
                         "actual_output": answer, "output_condition": '"refund"', "context": [f"ctx {t}"],
                         "categories": ["billing"] if t % 2 else ["shipping", "billing"]})
    return rows


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("view")
    data = root / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    result = sonar_core.run({"dataset": str(data), "evaluators": ["text_matching"], "output_dir": str(root / "reports"),
                             "run_id": "r1", "columnar_only_above": 0})
    assert result.status == "success"
    outside = tmp_path_factory.mktemp("outside")
    sonar_core.run({"dataset": str(data), "evaluators": ["text_matching"], "output_dir": str(outside), "run_id": "secret"})
    server = serve_in_thread([root / "reports"])
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def test_runs_are_listed(served):
    status, data, _ = _get(served + "/api/runs")
    assert status == 200
    assert [r["id"] for r in data["runs"]] == ["r1"]  # the run outside the given folder is not listed
    run = data["runs"][0]
    assert run["models"] == ["m1", "m2"] and run["rows"] == 10 and run["evaluators"] == ["text_matching"]
    assert run["parquet"] is True


def test_cases_are_paged_and_searched(served, monkeypatch):
    monkeypatch.setattr(queries, "PAGE_SIZE", 4)
    status, first, _ = _get(served + "/api/runs/r1/cases?page=1")
    assert status == 200 and first["total"] == 10 and first["page_size"] == 4
    assert [r["key"] for r in first["rows"]] == ["tc0::m1", "tc0::m2", "tc1::m1", "tc1::m2"]
    _, third, _ = _get(served + "/api/runs/r1/cases?page=3")
    assert [r["key"] for r in third["rows"]] == ["tc4::m1", "tc4::m2"]
    _, found, _ = _get(served + "/api/runs/r1/cases?q=QUESTION%202")
    assert [r["key"] for r in found["rows"]] == ["tc2::m1", "tc2::m2"]
    _, model, _ = _get(served + "/api/runs/r1/cases?model=m2&sort=key&desc=1")
    assert [r["key"] for r in model["rows"]] == ["tc4::m2", "tc3::m2", "tc2::m2", "tc1::m2"]
    _, failing, _ = _get(served + "/api/runs/r1/cases?evaluator=text_matching&failing=1")
    assert failing["total"] == 5 and {r["model_key"] for r in failing["rows"]} == {"m2"}


def test_bad_requests_and_paths_outside_are_refused(served):
    assert _get(served + "/api/runs/secret/cases")[0] == 404
    assert _get(served + "/api/runs/..%2F..%2Foutside/cases")[0] == 404
    assert _get(served + "/etc/passwd")[0] == 404
    status, data, _ = _get(served + "/api/runs/r1/cases?sort=input;DROP")
    assert status == 400 and data["error"].startswith("sort: one of key, ")
    status, data, _ = _get(served + "/api/runs/r1/cases?evaluator=nope")
    assert status == 400 and data["error"] == "no evaluator 'nope' with Parquet rows in run r1"
    request = urllib.request.Request(served + "/api/runs", method="POST", data=b"x")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 405


def test_hostile_strings_stay_data(served):
    status, data, headers = _get(served + "/api/runs/r1/cases?q=onerror")
    assert status == 200 and data["rows"][0]["input"] == HOSTILE
    assert headers["Content-Type"] == "application/json"
    with urllib.request.urlopen(served + "/", timeout=30) as response:
        page = response.read().decode()
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert page == PAGE
    # The page writes values with textContent only: nothing from a row is parsed as HTML.
    assert "innerHTML" not in page and "insertAdjacentHTML" not in page and "document.write" not in page


def test_a_case_has_its_transcript_and_every_evaluators_values(served):
    status, data, _ = _get(served + "/api/runs/r1/case?key=tc1%3A%3Am2")
    assert status == 200 and data["key"] == "tc1::m2" and data["conversation"] is None
    row = data["row"]
    assert (row["input"], row["actual_output"], row["context"], row["categories"]) == \
        ("question 1", "no 1", ["ctx 1"], ["billing"])
    [scored] = data["evaluators"]
    assert scored["evaluator"] == "text_matching"
    assert scored["values"]["model_passes"] == 0.0 and scored["values"]["model_failures"] == 1.0
    assert scored["error"].startswith("condition part '\"refund\"' did not match the actual answer")
    assert scored["details"]["condition"] == '"refund"'
    status, data, _ = _get(served + "/api/runs/r1/case?key=tc9%3A%3Am1")
    assert status == 404 and data["error"] == "no row 'tc9::m1' in run r1"


def test_filters_by_metric_range_and_category(served):
    status, data, _ = _get(served + "/api/runs/r1/filters")
    assert status == 200 and data["categories"] == ["billing", "shipping"]
    assert data["evaluators"]["text_matching"][:2] == ["model_passes", "model_failures"]
    base = served + "/api/runs/r1/cases?evaluator=text_matching&metric=model_passes"
    _, passing, _ = _get(base + "&min=0.5&category=shipping")  # shipping: tc0, tc2, tc4; passing: m1
    assert passing["total"] == 3 and [r["key"] for r in passing["rows"]] == ["tc0::m1", "tc2::m1", "tc4::m1"]
    _, low, _ = _get(base + "&max=0.5")
    assert low["total"] == 5 and {r["model_key"] for r in low["rows"]} == {"m2"}
    _, billing, _ = _get(served + "/api/runs/r1/cases?category=billing")
    assert billing["total"] == 10
    status, data, _ = _get(base + "&min=abc")
    assert status == 400 and data["error"] == "min: not a number: abc"
    status, data, _ = _get(served + "/api/runs/r1/cases?evaluator=text_matching&metric=key")
    assert status == 400 and data["error"] == "evaluator 'text_matching' has no metric 'key'"
    status, data, _ = _get(served + "/api/runs/r1/cases?metric=model_passes&min=1")
    assert status == 400 and data["error"] == "failing and metric need an evaluator"
