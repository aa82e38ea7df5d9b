"""Aggregates, problems, flips, insights and both leaderboard kinds, computed by hand.

The dataset: models A, B, C; test cases t1, t2, t3, and t4 = t1 with typos. ``toy_score``
scores each row with the number in its answer; ``toy_passfail`` passes answers with "ok".
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from sonar_core import names
from sonar_core.config import build_config
from sonar_core.contract import Metric
from sonar_core.findings.problems import threshold_severity
from sonar_core.execution import execute_run
from sonar_core.testing import score_rows

SCORES = {  # model -> (t1, t2, t3, t4)
    "A": ("0.9", "0.8", "0.1", "0.2"),
    "B": ("0.4", "0.3", "0.2", "0.7"),
    "C": ("0.1", "0.2", "0.0", "0.1"),
}
ERROR_RATE = {"A": "0.1", "B": "0.3", "C": "0.9"}
DURATION = {"A": 1.0, "B": 2.0, "C": 0.5}
COST = {"A": 0.01, "B": 0.02, "C": 0.005}
PASSFAIL = {  # model -> [(answer, context)] for t1..t4
    "A": [("ok fine", ["ok ctx"]), ("nope", ["bad"]), ("??", []), ("ok", [])],
    "B": [("nope", []), ("nope", []), ("nope", []), ("nope", [])],
    "C": [("ok", []), ("ok", []), ("ok", []), ("ok", [])],
}


def _rows(kind: str) -> list[dict]:
    rows = []
    for model in ("A", "B", "C"):
        for i, case in enumerate(("t1", "t2", "t3", "t4")):
            row = {"test_case_key": case, "model_key": model, "input": f"question {case}",
                   "actual_duration": DURATION[model], "cost": COST[model]}
            if case == "t4":
                row.update(original_test_case_key="t1", perturbation="typos")
            if kind == "score":
                row.update(actual_output=SCORES[model][i], expected_output=ERROR_RATE[model])
            else:
                answer, context = PASSFAIL[model][i]
                row.update(actual_output=answer, context=context)
            rows.append(row)
    return rows


def _bootstrap(values: list[float]) -> tuple[float, float]:
    """The 95% percentile bootstrap of the mean, seed 0, 2000 replicates, recomputed with numpy."""
    import numpy as np

    idx = np.random.default_rng(0).integers(0, len(values), size=(2000, len(values)))
    low, high = np.quantile(np.array(values)[idx].mean(axis=1), [0.025, 0.975])
    return float(low), float(high)


def _run(tmp_path: Path, plugins, kind: str, evaluator: str):
    dataset = tmp_path / f"{kind}.json"
    dataset.write_text(json.dumps(_rows(kind)), encoding="utf-8")
    config = build_config({"dataset": str(dataset), "evaluators": [evaluator], "output_dir": str(tmp_path),
                           "run_id": kind})
    result = execute_run(config, plugins=plugins)
    folder = next(result.run_dir.glob("explainer_*"))
    return result, folder


def _load(folder: Path, *parts: str):
    return json.loads(folder.joinpath(*parts).read_text(encoding="utf-8"))


def test_threshold_severity_rule():
    up = Metric("m", "M", "", threshold=0.5)
    assert threshold_severity(up, 0.25, 0.5) == "HIGH"  # at half the threshold
    assert threshold_severity(up, 0.26, 0.5) == "MEDIUM"
    down = Metric("d", "D", "", higher_is_better=False, threshold=0.2)
    # Mirrored: HIGH at or above 0.2 + (1 - 0.2) / 2 = 0.6.
    assert threshold_severity(down, 0.6, 0.2) == "HIGH"
    assert threshold_severity(down, 0.59, 0.2) == "MEDIUM"
    ranged = Metric("r", "R", "", value_range=(0.0, 10.0), threshold=6.0)
    assert threshold_severity(ranged, 3.0, 6.0) == "HIGH"  # 0 + (6 - 0) / 2 = 3
    assert threshold_severity(ranged, 3.5, 6.0) == "MEDIUM"


def test_score_evaluator_aggregates_problems_flips_insights(tmp_path, toy_plugins):
    result, folder = _run(tmp_path, toy_plugins, "score", "toy_score")
    assert result.exit_code == 0 and result.status == "success"

    board_dir = folder / names.HEATMAP_LEADERBOARD / "application_json"
    index = _load(board_dir, "explanation.json")
    assert index["files"]["ALL_METRICS"] == "leaderboard_0.json"
    board = _load(board_dir, index["files"]["ALL_METRICS"])
    # A: (0.9+0.8+0.1+0.2)/4 = 0.5; B: (0.4+0.3+0.2+0.7)/4 = 0.4; C: (0.1+0.2+0.0+0.1)/4 = 0.1
    assert board["data"]["A"]["score"] == pytest.approx(0.5)
    assert board["data"]["B"]["score"] == pytest.approx(0.4)
    assert board["data"]["C"]["score"] == pytest.approx(0.1)
    assert board["data"]["C"]["error_rate"] == pytest.approx(0.9)
    assert board["ranking"] == ["A", "B", "C"]
    assert board["models"]["B"]["total_time"] == pytest.approx(8.0)  # 4 rows x 2.0 s
    assert board["metadata"]["score"]["threshold"] == 0.5

    problems = _load(folder, names.PROBLEMS_DIR, names.PROBLEMS_FILE)
    summary = {(p["problem_attrs"]["model_name"], p["problem_attrs"]["metric_id"], p["problem_type"]): p
               for p in problems}
    assert set(summary) == {
        ("B", "score", "accuracy"),       # 0.4 < 0.5, above 0.25 -> MEDIUM
        ("C", "score", "accuracy"),       # 0.1 <= 0.25 -> HIGH
        ("B", "error_rate", "accuracy"),  # 0.3 > 0.2, below 0.6 -> MEDIUM
        ("C", "error_rate", "accuracy"),  # 0.9 >= 0.6 -> HIGH
        ("A", "score", "robustness"),     # t1 0.9 passes, t4 0.2 fails -> MEDIUM flip
        ("B", "score", "robustness"),     # t1 0.4 fails, t4 0.7 passes -> LOW flip
    }
    assert summary[("B", "score", "accuracy")]["severity"] == "MEDIUM"
    assert summary[("C", "score", "accuracy")]["severity"] == "HIGH"
    assert summary[("B", "error_rate", "accuracy")]["severity"] == "MEDIUM"
    assert summary[("C", "error_rate", "accuracy")]["severity"] == "HIGH"
    b_score = summary[("B", "score", "accuracy")]["problem_attrs"]
    assert b_score["metric_score"] == pytest.approx(0.4)
    assert b_score["dataset_row_keys"] == [["t1", "B"], ["t2", "B"], ["t3", "B"]]  # t4 = 0.7 passes
    flip_a = summary[("A", "score", "robustness")]
    assert flip_a["severity"] == "MEDIUM"
    assert flip_a["problem_attrs"]["original_metric_score"] == pytest.approx(0.9)
    assert flip_a["problem_attrs"]["metric_score"] == pytest.approx(0.2)
    assert flip_a["problem_attrs"]["dataset_row_keys"] == [["t4", "A"]]
    assert "after typos of test case t1" in flip_a["description"]
    assert summary[("B", "score", "robustness")]["severity"] == "LOW"
    assert {p["schema_version"] for p in problems} == {"1.0"}

    insights = _load(folder, names.INSIGHTS_DIR, names.INSIGHTS_FILE)
    by_type = {}
    for insight in insights:
        by_type.setdefault(insight["insight_type"], []).append(insight["insight_attrs"])
    assert [(a["model_name"], a["rank"]) for a in by_type["accuracy"]] == [("A", "best"), ("C", "worst")]
    # Failures (< 0.5) per case: t1 B,C; t2 B,C; t3 A,B,C; t4 A,C -> t3 is failed by all three.
    weak = by_type["weak-point"][0]
    assert weak["test_case_key"] == "t3" and weak["failed_models"] == ["A", "B", "C"]
    assert weak["mean_score"] == pytest.approx(0.1)  # (0.1 + 0.2 + 0.0) / 3
    assert [(a["model_name"], a["value"]) for a in by_type["performance"]] == [("C", 0.5), ("B", 2.0)]
    costs = [(a["model_name"], round(a["value"], 6)) for a in by_type["cost"]]
    assert costs == [("C", 0.02), ("B", 0.08)]  # 4 x 0.005 and 4 x 0.02

    markdown = (folder / names.HEATMAP_LEADERBOARD / "text_markdown" / "explanation.md").read_text()
    # Each value is followed by its interval: the score's bootstrap (seed 0, 2000 replicates, the
    # documented draws), each model's constant error rate a zero-width one. Vs. best: the paired
    # permutation tests enumerate 16 sign patterns: A-B (0.5, 0.5, -0.1, -0.5) every pattern
    # reaches |0.4|: p = 1; A-C (0.8, 0.6, 0.1, 0.1) and B-C (0.3, 0.1, 0.2, 0.6) only all-plus and
    # all-minus: p = 2/16; Holm: A-C 3 x 0.125 = 0.375, B-C max(0.375, 0.25), A-B 1.
    a_low, a_high = _bootstrap([0.9, 0.8, 0.1, 0.2])
    c_low, c_high = _bootstrap([0.1, 0.2, 0.0, 0.1])
    assert f"| 1 | A | 0.5000 [{a_low:.4f}, {a_high:.4f}] | 0.1000 [0.1000, 0.1000] |  | 4.00 | 0.0400 |" in markdown
    assert f"| 3 | C | 0.1000 [{c_low:.4f}, {c_high:.4f}] | 0.9000 [0.9000, 0.9000] | tie (p = 0.38) | 2.00 | 0.0200 |" \
        in markdown


def test_bool_evaluator_leaderboard_counts_and_problems(tmp_path, toy_plugins):
    result, folder = _run(tmp_path, toy_plugins, "passfail", "toy_passfail")
    assert result.exit_code == 0
    board_dir = folder / names.BOOL_LEADERBOARD / "application_json"
    board = _load(board_dir, "leaderboard_0.json")
    assert board["kind"] == "bool"
    assert board["ranking"] == ["C", "A", "B"]  # passes: C 4/4, A 2/4, B 0/4
    # A: t1 pass, t2 fail with a failing context, t3 parse failure, t4 pass.
    assert board["models"]["A"]["counts"] == {"pass": 2, "fail": 1, "retrieval_failure": 1,
                                              "generation_failure": 1, "parse_failure": 1}
    assert board["data"]["A"] == {"passes": 0.5, "failures": 0.25, "retrieval_failures": 0.25,
                                  "generation_failures": 0.25, "parse_failures": 0.25}
    assert board["models"]["B"]["counts"]["fail"] == 4
    problems = _load(folder, names.PROBLEMS_DIR, names.PROBLEMS_FILE)
    # Only B's pass rate (0.0 <= 0.25) is a problem: mirrored metrics raise none, A's 0.5 is not below 0.5.
    assert [(p["problem_attrs"]["model_name"], p["problem_attrs"]["metric_id"], p["severity"])
            for p in problems] == [("B", "passes", "HIGH")]
    # The flip of B? B fails t1 and t4; A passes t1 and t4; C passes both: no flips.
    insights = _load(folder, names.INSIGHTS_DIR, names.INSIGHTS_FILE)
    retrieval = [i["insight_attrs"] for i in insights if i["insight_type"] == "retrieval"]
    # retrieval failures: A 0.25, B 0.0, C 0.0 -> best B (name order among ties), worst A
    assert [(a["model_name"], a["rank"]) for a in retrieval] == [("B", "best"), ("A", "worst")]
    markdown = (folder / names.BOOL_LEADERBOARD / "text_markdown" / "explanation.md").read_text()
    assert markdown.splitlines()[2] == ("| Rank | LLM | Pass | Fail | Passes | Retrieval failures | Parse failures "
                                        "| Vs. best | Time (s) | Cost (USD) |")
    # Wilson 95%: 2 of 4 -> [0.1500, 0.8500], 1 of 4 -> [0.0456, 0.6994]. McNemar against C (4 of 4):
    # A fails t2, t3 where C passes (2 vs 0): p = 2 x 1/4 = 0.5; B 4 vs 0: p = 2/16; A-B 2 vs 0: 0.5.
    # Holm: C-B 3 x 0.125 = 0.375, C-A max(0.375, 2 x 0.5) = 1, A-B 1.
    assert ("| 2 | A | 2 | 1 | 0.5000 [0.1500, 0.8500] | 0.2500 [0.0456, 0.6994] | 0.2500 [0.0456, 0.6994] "
            "| tie (p = 1) | 4.00 | 0.0400 |") in markdown
    assert "| 3 | B | 0 | 4 | 0.0000 [0.0000, 0.4899] |" in markdown and "| tie (p = 0.38) | 8.00 | 0.0800 |" in markdown
    results = _load(folder, names.EVAL_RESULTS, "application_json", "explanation.json")["results"]
    t2a = next(r for r in results if r["test_case_key"] == "t2" and r["model_key"] == "A")
    assert t2a["result_error_message"] == "no 'ok' in the answer"
    t3a = next(r for r in results if r["test_case_key"] == "t3" and r["model_key"] == "A")
    assert t3a["result_error_message"] == "cannot parse '??'" and t3a["parse_failures"] == 1.0


def test_threshold_overrides_and_metric_threshold(tmp_path, toy_plugins):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(_rows("score")), encoding="utf-8")
    config = build_config({"dataset": str(dataset), "output_dir": str(tmp_path), "run_id": "t",
                           "evaluators": [{"id": "toy_score", "params": {"metric_threshold": 0.35}}],
                           "thresholds": {"error_rate": 0.95}})
    result = execute_run(config, plugins=toy_plugins)
    # score threshold 0.35: only C (0.1) fails; error_rate threshold 0.95: nobody fails.
    # Flips at 0.35: A 0.9 -> 0.2 flips; B 0.4 -> 0.7 both pass; C 0.1 -> 0.1 no.
    kinds = sorted((p["problem_attrs"]["model_name"], p["problem_type"]) for p in result.problems)
    assert kinds == [("A", "robustness"), ("C", "accuracy")]


def test_model_level_metric_problems_name_no_rows():
    from sonar_core import Evaluator, Input, RowResult
    from sonar_core.findings import ScoredEvaluator
    from sonar_core.findings.problems import flip_problems, threshold_problems
    from sonar_core.testing import make_row

    class MacroEvaluator(Evaluator):
        id = "macro"
        display_name = "Macro"
        required_inputs = (Input.ACTUAL_ANSWER,)
        metrics = (Metric("macro_f1", "Macro F1", "A model-level value.", threshold=0.75, is_primary=True,
                          model_level=True),)

    rows = [make_row(test_case_key="t1", model_key="m", actual_output="a"),
            make_row(test_case_key="t2", model_key="m", actual_output="b", original_test_case_key="t1")]
    ev = ScoredEvaluator(cls=MacroEvaluator, params={}, thresholds={"macro_f1": 0.75},
                         scored=[(rows[0], RowResult({"macro_f1": 0.5})), (rows[1], RowResult({"macro_f1": 0.5}))])
    [problem] = threshold_problems(ev)
    # 0.5 < 0.75 and above 0.375: MEDIUM; a model-level value lists no rows.
    assert problem.description == "Model m: Macro F1 is 0.5000, below the threshold 0.75."
    assert problem.severity == "MEDIUM"
    assert problem.attrs["dataset_row_keys"] == [] and problem.attrs["test_case_keys"] == []
    assert flip_problems(ev) == []


def test_table_names_never_become_paths(tmp_path):
    from sonar_core import Evaluator, Input, RowResult, Table
    from sonar_core.findings import ScoredEvaluator, derive_findings
    from sonar_core.artifacts.evaluator_dir import safe_file_stem, write_evaluator_dir
    from sonar_core.testing import make_row

    assert safe_file_stem("../../etc/passwd") == "_.._etc_passwd"
    assert safe_file_stem("confusion matrix: org/model") == "confusion_matrix__org_model"
    assert safe_file_stem("...") == "table"

    class Tabled(Evaluator):
        id = "tabled"
        display_name = "Tabled"
        required_inputs = (Input.ACTUAL_ANSWER,)
        metrics = (Metric("v", "V", "", is_primary=True),)

    row = make_row(test_case_key="t", model_key="../m", actual_output="x")
    ev = ScoredEvaluator(cls=Tabled, params={"save_llm_result": True}, thresholds={"v": 0.5},
                         scored=[(row, RowResult({"v": 1.0}))],
                         tables=[Table("../evil", "Evil", ["a"], [[1]]), Table("/evil", "Evil 2", ["a"], [[2]])])
    folder = tmp_path / "ev"
    write_evaluator_dir(derive_findings(ev), folder)
    assert sorted(p.name for p in (folder / "work").iterdir()) == [
        "_evil.csv", "_evil.json", "_evil_2.csv", "_evil_2.json", "report.md"]
    assert not (tmp_path / "evil.json").exists()


def test_sensitive_outputs_are_withheld_from_html_reports(tmp_path):
    from sonar_core import MetricRole, PassFailEvaluator, Verdict
    from sonar_core.findings import ScoredEvaluator, derive_findings
    from sonar_core.artifacts.evaluator_dir import write_evaluator_dir
    from sonar_core.artifacts.html import WITHHELD
    from sonar_core.testing import make_row

    class Leaky(PassFailEvaluator):
        id = "leaky"
        display_name = "Leaky"
        sensitive_outputs = True
        metrics = (Metric("ok", "OK", "", is_primary=True, role=MetricRole.PASS),)

        def check(self, row):
            return Verdict(answer_ok=False, error_message="card 4111********1111 leaked")

    row = make_row(test_case_key="t", model_key="m", actual_output="my card is 4111 1111 1111 1111")
    [result] = score_rows(Leaky, [row])
    ev = ScoredEvaluator(cls=Leaky, params={}, thresholds={"ok": 0.5}, scored=[(row, result)])
    write_evaluator_dir(derive_findings(ev), tmp_path / "ev")
    page = (tmp_path / "ev" / "global_html_fragment" / "text_html" / "explanation.html").read_text()
    assert "4111 1111 1111 1111" not in page
    assert "card 4111********1111 leaked" in page
    assert html.escape(WITHHELD) in page


def test_html_clips_huge_answers_messages_and_cells(tmp_path):
    from sonar_core import Evaluator, Input, RowResult, Table
    from sonar_core.findings import ScoredEvaluator, derive_findings
    from sonar_core.artifacts.evaluator_dir import write_evaluator_dir
    from sonar_core.artifacts.html import clip
    from sonar_core.testing import make_row

    assert clip("abc", 3) == "abc"
    assert clip("abcd", 3) == "abc… (4 characters in all)"

    class Big(Evaluator):
        id = "big"
        display_name = "Big"
        required_inputs = (Input.ACTUAL_ANSWER,)
        metrics = (Metric("v", "V", "", is_primary=True),)

    huge = "x" * 1_000_000
    row = make_row(test_case_key="t", model_key="m", actual_output=huge)
    ev = ScoredEvaluator(cls=Big, params={"save_llm_result": True}, thresholds={"v": 0.5},
                         scored=[(row, RowResult({"v": 0.0}, error_message=huge))],
                         tables=[Table("t", "T", ["label", huge], [[huge, 1]])])
    write_evaluator_dir(derive_findings(ev), tmp_path / "ev")
    page = (tmp_path / "ev" / "global_html_fragment" / "text_html" / "explanation.html").read_text()
    assert len(page) < 30_000  # 2,000 for the answer + 3 x 300 for message and cells, plus the page
    assert "x" * 2000 + "… (1,000,000 characters in all)" in page
    # The full answer is still in the evaluated dataset.
    results = json.loads((tmp_path / "ev" / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    assert results["results"][0]["actual_output"] == huge


def test_evaluator_specific_problems_are_completed_by_the_core(tmp_path):
    from sonar_core import Evaluator, Input, RowResult
    from sonar_core.findings import ScoredEvaluator
    from sonar_core.artifacts.items import problem_json
    from sonar_core.findings import collect_problems
    from sonar_core.testing import make_row

    class Own(Evaluator):
        id = "own"
        display_name = "Own"
        problem_type = "privacy"
        required_inputs = (Input.ACTUAL_ANSWER,)
        metrics = (Metric("v", "V", "", is_primary=True),)

    row = make_row(test_case_key="t", model_key="m", actual_output="x")
    ev = ScoredEvaluator(cls=Own, params={}, thresholds={"v": 0.5}, scored=[(row, RowResult({"v": 1.0}))],
                         extra_problems=[{"description": "m repeats a phone number", "severity": "LOW",
                                          "problem_attrs": {"model_name": "m"}}])
    [found] = collect_problems(ev)
    assert found.description == "m repeats a phone number" and found.severity == "LOW"
    assert found.problem_type == "privacy" and found.source.evaluator_id == "own"
    assert found.attrs["avid_problem_code"] == "S0301" and found.attrs["model_name"] == "m"
    problem = problem_json(found)  # as problems_and_actions.json holds it
    assert problem["schema_version"] == "1.0" and problem["description_html"] == "m repeats a phone number"
    assert problem["problem_attrs"]["model_name"] == "m" and problem["evaluator_id"] == "own"

    ev.extra_problems = [{"description": "x", "severity": "CRITICAL"}]
    with pytest.raises(ValueError, match=r"^own\.extra_problems\(\) returned a problem without a description or "
                                         r"with severity 'CRITICAL' \(use one of HIGH, MEDIUM, LOW\)$"):
        collect_problems(ev)
