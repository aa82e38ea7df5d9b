"""``sonar view``'s comparison and metric sort, through the JSON API of a real server on 127.0.0.1 (issue 41
item 2): two runs of a dataset whose flips are known (tests/view_pair.py), what ``sonar compare`` concludes
per metric and model, the flips paged and filtered, runs of different datasets refused in one line, and the
cases sorted by a metric with bad sort keys refused."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request

import pytest

pytest.importorskip("duckdb")

from sonar_core.view import comparison, queries
from sonar_core.view.server import serve_in_thread
from view_pair import HOSTILE_CASE, write_pair


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    reports = write_pair(tmp_path_factory.mktemp("pair"), hostile=True)
    server = serve_in_thread([reports])
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's score interval at 95%, written out here (z = 1.959964)."""
    z, p = 1.959964, k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _entry(data, metric, model):
    [found] = [m for m in data["metrics"] if (m["metric"], m["model"]) == (metric, model)]
    return found


def test_the_comparison_per_metric_and_model(served):
    status, data = _get(served + "/api/compare?a=ra&b=rb")
    assert status == 200 and (data["a"], data["b"]) == ("ra", "rb")
    assert data["models"] == ["m1", "m2"] and data["test_cases_shared"] == 12
    assert data["test_cases_only_a"] == {"count": 0, "first": []} and data["evaluators_only_b"] == []
    assert [e["label"] for e in data["evaluators"]] == ["text_matching"] and data["evaluators"][0]["shared_rows"] == 24
    # m2 passed all 12 cases in A and 2 in B: ten pass -> fail, exact McNemar p = 2 * 0.5^10; Holm over the
    # evaluator's six tests whose pairs differ (passes, failures, generation failures x m1, m2): 6 * p.
    m2 = _entry(data, "model_passes", "m2")
    assert (m2["a"]["value"], m2["a"]["n"], m2["b"]["n"]) == (1.0, 12, 12)
    assert m2["b"]["value"] == pytest.approx(2 / 12) and m2["delta"] == pytest.approx(-10 / 12)
    assert (m2["b"]["ci_low"], m2["b"]["ci_high"]) == pytest.approx(_wilson(2, 12), abs=1e-5)
    assert m2["a"]["ci_low"] == pytest.approx(_wilson(12, 12)[0], abs=1e-5)
    assert m2["test"]["test"] == "mcnemar-exact" and m2["test"]["n"] == 12
    assert m2["test"]["p_value"] == pytest.approx(2 * 0.5 ** 10)
    assert m2["test"]["p_adjusted"] == pytest.approx(6 * 2 * 0.5 ** 10) and m2["test"]["family_size"] == 6
    assert (m2["verdict"], m2["pass_to_fail"], m2["fail_to_pass"]) == ("worse", 10, 0)
    # m1: tc00 pass -> fail, tc11 fail -> pass: 11/12 both times, McNemar p = 1.
    m1 = _entry(data, "model_passes", "m1")
    assert m1["a"]["value"] == m1["b"]["value"] == pytest.approx(11 / 12) and m1["delta"] == 0.0
    assert (m1["test"]["p_value"], m1["verdict"], m1["pass_to_fail"], m1["fail_to_pass"]) == (1.0, "same", 1, 1)
    assert _entry(data, "model_failures", "m2")["verdict"] == "worse"  # lower is better: 0 -> 10/12
    assert data["regressions"] == 3 and data["flips"] == 3 * (2 + 10)
    # B against A the other way round: m2 is better.
    status, back = _get(served + "/api/compare?a=rb&b=ra")
    assert status == 200 and _entry(back, "model_passes", "m2")["verdict"] == "better" and back["regressions"] == 0
    assert (_entry(back, "model_passes", "m2")["pass_to_fail"], _entry(back, "model_passes", "m2")["fail_to_pass"]) == (0, 10)


def test_flips_are_paged_and_filtered(served, monkeypatch):
    monkeypatch.setattr(comparison, "FLIPS_PAGE_SIZE", 4)
    base = served + "/api/compare/flips?a=ra&b=rb&evaluator=text_matching&metric=model_passes"
    status, first = _get(base + "&model=m2&direction=pass_to_fail")
    assert status == 200 and first["total"] == 10 and first["page_size"] == 4
    assert [f["test_case_key"] for f in first["flips"]] == ["tc00", "tc01", "tc02", HOSTILE_CASE]
    flip = first["flips"][3]
    assert flip == {"evaluator": "text_matching", "metric": "model_passes", "model": "m2", "direction": "pass_to_fail",
                    "test_case_key": HOSTILE_CASE, "key_a": f"{HOSTILE_CASE}::m2", "key_b": f"{HOSTILE_CASE}::m2"}
    _, third = _get(base + "&model=m2&direction=pass_to_fail&page=3")
    assert [f["test_case_key"] for f in third["flips"]] == ["tc08", "tc09"]
    _, m1 = _get(base + "&model=m1")
    assert [(f["test_case_key"], f["direction"]) for f in m1["flips"]] == [("tc00", "pass_to_fail"), ("tc11", "fail_to_pass")]
    _, back = _get(base + "&direction=fail_to_pass")
    assert [(f["test_case_key"], f["model"]) for f in back["flips"]] == [("tc11", "m1")]
    _, every = _get(served + "/api/compare/flips?a=ra&b=rb")
    assert every["total"] == 36
    # The key a flip carries opens its case page in either run.
    status, case = _get(served + "/api/runs/rb/case?key=" + urllib.request.quote(flip["key_b"]))
    assert status == 200 and case["row"]["test_case_key"] == HOSTILE_CASE and case["row"]["actual_output"] == "sorry, no 3"
    status, case = _get(served + "/api/runs/ra/case?key=" + urllib.request.quote(flip["key_a"]))
    assert status == 200 and case["row"]["actual_output"] == "a refund for 3"


def test_runs_that_cannot_be_compared_and_bad_requests(served):
    status, data = _get(served + "/api/compare?a=ra&b=rc")
    assert status == 400 and data == {"error": "ra and rc cannot be compared: the runs share no test case (A has 12, B 3): "
                                               "nothing to compare (--allow-partial writes the comparison anyway, saying so)"}
    status, data = _get(served + "/api/compare/flips?a=ra&b=rc")
    assert status == 400 and data["error"].startswith("ra and rc cannot be compared: the runs share no test case")
    assert _get(served + "/api/compare?a=ra&b=..%2F..%2Fsecret") == \
        (404, {"error": "compare: a and b must each be a listed run's id"})
    assert _get(served + "/api/compare?a=ra")[0] == 404
    assert _get(served + "/api/compare/flips?a=ra&b=rb&direction=sideways") == \
        (400, {"error": "direction: one of pass_to_fail, fail_to_pass"})
    assert _get(served + "/api/compare/nope?a=ra&b=rb") == (404, {"error": "not found"})


def test_cases_sorted_by_a_metric(served, monkeypatch):
    monkeypatch.setattr(queries, "PAGE_SIZE", 3)
    status, up = _get(served + "/api/runs/rb/cases?sort=text_matching.model_passes&order=asc")
    # Failing rows (0) first, then by key ('<' of the hostile case sorts before 't'): m2's tc03, tc00 of both.
    assert status == 200 and (up["sort"], up["order"]) == ("text_matching.model_passes", "asc")
    assert [(r["key"], r["sort_value"]) for r in up["rows"]] == \
        [(f"{HOSTILE_CASE}::m2", 0.0), ("tc00::m1", 0.0), ("tc00::m2", 0.0)]
    _, down = _get(served + "/api/runs/rb/cases?sort=text_matching.model_passes&order=desc")
    assert [(r["key"], r["sort_value"]) for r in down["rows"]] == \
        [(f"{HOSTILE_CASE}::m1", 1.0), ("tc01::m1", 1.0), ("tc02::m1", 1.0)]
    _, m2 = _get(served + "/api/runs/rb/cases?sort=text_matching.model_passes&order=desc&model=m2")
    assert [r["key"] for r in m2["rows"]] == ["tc10::m2", "tc11::m2", f"{HOSTILE_CASE}::m2"] and m2["total"] == 12
    _, beyond = _get(served + "/api/runs/rb/cases?sort=text_matching.model_passes&model=m2&page=5")
    assert (beyond["total"], beyond["rows"]) == (12, [])  # the page past the end still counts the rows
    _, failing = _get(served + "/api/runs/rb/cases?evaluator=text_matching&failing=1&sort=text_matching.model_failures&order=desc")
    assert failing["total"] == 11 and [r["sort_value"] for r in failing["rows"]] == [1.0, 1.0, 1.0]
    _, old = _get(served + "/api/runs/rb/cases?sort=model_key&desc=1")  # the older spelling of the order
    assert [r["key"] for r in old["rows"]] == [f"{HOSTILE_CASE}::m2", "tc00::m2", "tc01::m2"]
    assert "sort_value" not in old["rows"][0]


def test_bad_sort_keys_are_refused_in_one_line(served):
    for sort in ("text_matching.nope", "text_matching.key", "nope.model_passes", 'model_passes"; DROP TABLE x; --'):
        status, data = _get(served + "/api/runs/rb/cases?sort=" + urllib.request.quote(sort))
        assert status == 400 and data["error"] == (
            "sort: one of key, test_case_key, model_key, input, actual_output or EVALUATOR.METRIC naming a metric "
            f"of the run (e.g. text_matching.model_passes); got '{sort}'")
    assert _get(served + "/api/runs/rb/cases?sort=key&order=up") == (400, {"error": "order: asc or desc; got 'up'"})
