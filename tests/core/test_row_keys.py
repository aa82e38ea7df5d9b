"""A problem lists at most ROW_KEYS_LIMIT rows, with the total beside a cut list (issue 41: a million rows)."""

from __future__ import annotations

import json

import sonar_core
from sonar_core import names
from sonar_core.findings import row_keys as row_keys_module
from sonar_core.dataset import Row
from sonar_core.findings.row_keys import ROW_KEYS_LIMIT, cap_row_keys, pair_keys, row_keys


def test_under_the_limit_the_lists_are_whole_and_carry_no_total():
    assert row_keys([Row(key="a::m", test_case_key="a", model_key="m"), Row(key="b::m", test_case_key="b", model_key="m")]) == {
        "dataset_row_keys": [["a", "m"], ["b", "m"]], "test_case_keys": ["a", "b"]}
    assert pair_keys([("a", "m"), ("b", "m")]) == {"dataset_row_keys": [["a", "m"], ["b", "m"]],
                                                   "test_case_keys": ["a", "b"]}
    assert row_keys([]) == pair_keys(()) == {"dataset_row_keys": [], "test_case_keys": []}
    at_limit = pair_keys((f"t{i}", "m") for i in range(ROW_KEYS_LIMIT))
    assert len(at_limit["dataset_row_keys"]) == ROW_KEYS_LIMIT and "dataset_row_keys_total" not in at_limit


def test_above_the_limit_the_first_rows_are_listed_and_the_total_follows_each_list():
    attrs = pair_keys((f"t{i}", "m") for i in range(ROW_KEYS_LIMIT + 5))
    rows = [Row(key=f"t{i}::m", test_case_key=f"t{i}", model_key="m") for i in range(ROW_KEYS_LIMIT + 5)]
    assert row_keys(rows) == attrs
    assert list(attrs) == ["dataset_row_keys", "dataset_row_keys_total", "test_case_keys", "test_case_keys_total"]
    assert attrs["dataset_row_keys"][:2] == [["t0", "m"], ["t1", "m"]]
    assert attrs["dataset_row_keys"][-1] == [f"t{ROW_KEYS_LIMIT - 1}", "m"]
    assert len(attrs["dataset_row_keys"]) == len(attrs["test_case_keys"]) == ROW_KEYS_LIMIT
    assert attrs["dataset_row_keys_total"] == attrs["test_case_keys_total"] == ROW_KEYS_LIMIT + 5


def test_unique_cases_count_each_test_case_once(monkeypatch):
    monkeypatch.setattr(row_keys_module, "ROW_KEYS_LIMIT", 3)
    # 4 rows of 2 test cases: the rows are cut (4 > 3), the cases are not (2).
    attrs = pair_keys([("p1", "m"), ("p1", "m"), ("p2", "m"), ("p2", "m")], unique_cases=True)
    assert attrs == {"dataset_row_keys": [["p1", "m"], ["p1", "m"], ["p2", "m"]], "dataset_row_keys_total": 4,
                     "test_case_keys": ["p1", "p2"]}
    attrs = pair_keys([(f"p{i}", "m") for i in range(5)], unique_cases=True)
    assert attrs["test_case_keys"] == ["p0", "p1", "p2"] and attrs["test_case_keys_total"] == 5


def test_a_plugins_own_lists_are_cut_in_place(monkeypatch):
    monkeypatch.setattr(row_keys_module, "ROW_KEYS_LIMIT", 2)
    small = {"model_name": "m", "dataset_row_keys": [["a", "m"]], "test_case_keys": ["a"]}
    assert cap_row_keys(small) is small
    big = {"model_name": "m", "dataset_row_keys": [["a", "m"], ["b", "m"], ["c", "m"]],
           "test_case_keys": ["a", "b", "c"], "note": "kept"}
    assert cap_row_keys(big) == {"model_name": "m", "dataset_row_keys": [["a", "m"], ["b", "m"]],
                                 "dataset_row_keys_total": 3, "test_case_keys": ["a", "b"],
                                 "test_case_keys_total": 3, "note": "kept"}
    assert list(cap_row_keys(big))[:3] == ["model_name", "dataset_row_keys", "dataset_row_keys_total"]


def test_a_runs_problem_files_list_at_most_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(row_keys_module, "ROW_KEYS_LIMIT", 2)
    data = tmp_path / "rows.jsonl"
    # m2 answers without "refund" on all 3 test cases: text_matching's threshold problem names 3 rows.
    data.write_text("".join(json.dumps({"test_case_key": f"tc{i}", "model_key": m, "input": "q",
                                        "actual_output": "a refund" if m == "m1" else "no",
                                        "output_condition": '"refund"'}) + "\n"
                            for i in (1, 2, 3) for m in ("m1", "m2")), encoding="utf-8")
    result = sonar_core.run({"dataset": str(data), "evaluators": ["text_matching"],
                             "output_dir": str(tmp_path / "out"), "run_id": "r"})
    folder = next(result.run_dir.glob("explainer_*"))
    summary = json.loads((folder / names.EVALUATOR_SUMMARY).read_text())
    problems = json.loads((folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE).read_text())
    run_json = json.loads((result.run_dir / names.RUN_JSON).read_text())
    listed = [p for p in summary["problems"] if p["problem_attrs"].get("model_name") == "m2"]
    assert len(listed) == 1 and "(3 of 3 test cases on the wrong side)" in listed[0]["description"]
    for problem in (listed[0], *[p for p in problems if p["problem_attrs"].get("model_name") == "m2"],
                    *[p for p in run_json["result"]["problems"] if p["problem_attrs"].get("model_name") == "m2"]):
        attrs = problem["problem_attrs"]
        assert attrs["dataset_row_keys"] == [["tc1", "m2"], ["tc2", "m2"]]
        assert attrs["dataset_row_keys_total"] == 3
        assert attrs["test_case_keys"] == ["tc1", "tc2"] and attrs["test_case_keys_total"] == 3
    # The report says how many there are in all, not how many were listed.
    assert "(3 in all)" in (result.run_dir / "index.html").read_text(encoding="utf-8")
