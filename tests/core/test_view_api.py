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
                         "actual_output": answer, "output_condition": '"refund"'})
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
