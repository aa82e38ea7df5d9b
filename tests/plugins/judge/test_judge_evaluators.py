"""Every judge evaluator against the scripted judge server: verdicts, metrics, problems, leaderboards.

The run turns calibration off: the verdicts themselves are tested here, and a scripted judge that
answers by model would fail its calibration (tests/core/test_judge_trust.py tests that path)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli

from judge_script import ANSWERS, GARBAGE, write_dataset, reply
from judge_server import write_llm_configs

#: evaluator id -> (pass metric, fail metric, parse-failure metric)
METRICS = {
    "contact_information": ("no_contact_information_leakages", "contact_information_leakages",
                            "contact_information_parsing_failures"),
    "language_mismatch": ("same_language", "language_mismatch", "language_mismatch_parsing_failures"),
    "sexism": ("no_sexism", "sexist", "sexism_parsing_failures"),
    "stereotypes": ("stereotype_free", "stereotyped", "stereotypes_parsing_failures"),
    "summarization_judge": ("good_summary", "bad_summary", "summarization_parsing_failures"),
    "byop": ("model_passes", "model_failures", "model_parse_failures"),
    "fact_check": ("fact_check_passes", "fact_check_failures", "fact_check_parse_failures"),
}
#: The reason a failing row of ``bad`` carries, per evaluator.
BAD_REASONS = {
    "contact_information": "judge test-judge: contact information present",
    "language_mismatch": "judge test-judge: the answer is not in the question's language",
    "sexism": "judge test-judge: sexist language found",
    "stereotypes": "judge test-judge: stereotyping score 8 of 10 (fails at 5)",
    "summarization_judge": "judge test-judge: the summary is not comprehensive, concise, coherent and independent",
    "byop": "judge test-judge: judged false",
    "fact_check": "judge test-judge: score 0.2: Mars is <b>not</b> blue & red",
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """One run of every judge evaluator over the judge dataset, against a scripted server."""
    from judge_server import JudgeServer

    tmp = tmp_path_factory.mktemp("judged")
    with JudgeServer(default=reply) as server:
        configs = write_llm_configs(tmp / "llm.yaml", server.base_url)
        result = sonar_core.run(dataset=str(write_dataset(tmp / "d.json")), evaluators=list(METRICS),
                                output_dir=str(tmp / "out"), run_id="r", llm_configs=str(configs),
                                llm_cache=str(tmp / "cache.sqlite"), calibrate=False)
        calls = server.calls
    return result, calls


def _folder(result, evaluator_id):
    record = json.loads((result.run_dir / names.RUN_JSON).read_text())
    entry = next(e for e in record["result"]["executed_explainers"] if e["evaluator_id"] == evaluator_id)
    return result.run_dir / entry["job_location"]


def _rows(folder):
    path = folder / names.EVAL_RESULTS / "application_json" / "explanation.json"
    return {(r["test_case_key"], r["model_key"]): r for r in json.loads(path.read_text())["results"]}


def _board(folder):
    base = folder / names.BOOL_LEADERBOARD / "application_json"
    index = json.loads((base / "explanation.json").read_text())
    return json.loads((base / index["files"]["ALL_METRICS"]).read_text())


def test_every_judge_evaluator_runs_once_per_row(judged):
    result, calls = judged
    assert result.status == "success" and result.failed == [] and result.skipped == []
    assert calls == 7 * 12


@pytest.mark.parametrize("evaluator_id", sorted(METRICS))
def test_verdicts_metrics_and_reasons_per_row(judged, evaluator_id):
    result, _ = judged
    passed, failed, parse = METRICS[evaluator_id]
    rows = _rows(_folder(result, evaluator_id))
    assert len(rows) == 12
    for (case, model), row in rows.items():
        expected = {"good": (1.0, 0.0, 0.0), "bad": (0.0, 1.0, 0.0),
                    "flaky": (1.0, 0.0, 0.0) if case == "t4" else (0.0, 0.0, 1.0)}[model]
        assert (row[passed], row[failed], row[parse]) == expected, (case, model)
        assert row["judge_agreement"] is None  # judged once
        assert row["details"]["judge"] == "test-judge"
        if model == "bad":
            assert row["result_error_message"] == BAD_REASONS[evaluator_id]
        elif model == "flaky" and case != "t4":
            assert row["details"]["judge_answers"] == [GARBAGE]
            assert row["result_error_message"].startswith("judge test-judge: expected ")
        else:
            assert row["result_error_message"] == ""
            assert row["details"]["judge_answers"] == [reply(f"{ANSWERS[evaluator_id][0]} Answer of {model} to {case}.")]


@pytest.mark.parametrize("evaluator_id", sorted(METRICS))
def test_leaderboard_ranks_models_and_counts_verdicts(judged, evaluator_id):
    result, _ = judged
    board = _board(_folder(result, evaluator_id))
    passed, _, parse = METRICS[evaluator_id]
    assert board["ranking"] == ["good", "flaky", "bad"]
    assert {m: (v[passed], v[parse]) for m, v in board["data"].items()} == \
        {"good": (1.0, 0.0), "bad": (0.0, 0.0), "flaky": (0.25, 0.75)}
    counts = {m: board["models"][m]["counts"] for m in board["data"]}
    assert counts["good"] == {"pass": 4, "fail": 0, "retrieval_failure": 0, "generation_failure": 0,
                              "parse_failure": 0}
    assert counts["bad"] == {"pass": 0, "fail": 4, "retrieval_failure": 0, "generation_failure": 4,
                             "parse_failure": 0}
    assert counts["flaky"] == {"pass": 1, "fail": 0, "retrieval_failure": 0, "generation_failure": 0,
                               "parse_failure": 3}
    assert board["models"]["bad"]["total_time"] == 8.0


def test_fact_check_score_is_its_primary_metric(judged):
    result, _ = judged
    folder = _folder(result, "fact_check")
    rows = _rows(folder)
    assert [rows[("t1", m)]["fact_check"] for m in ("good", "bad", "flaky")] == [0.9, 0.2, None]
    assert rows[("t4", "flaky")]["fact_check"] == 0.8
    board = _board(folder)
    assert {m: v["fact_check"] for m, v in board["data"].items()} == \
        pytest.approx({"good": 0.9, "bad": 0.2, "flaky": 0.8})


@pytest.mark.parametrize("evaluator_id", sorted(METRICS))
def test_problems_name_the_failing_model_and_the_unreliable_judge(judged, evaluator_id):
    result, _ = judged
    problems = json.loads((_folder(result, evaluator_id) / names.PROBLEMS_DIR / names.PROBLEMS_FILE).read_text())
    primary = "fact_check" if evaluator_id == "fact_check" else METRICS[evaluator_id][0]
    threshold = [(p["problem_attrs"]["model_name"], p["problem_attrs"]["metric_id"], p["severity"])
                 for p in problems if p["problem_type"] != "judge"]
    if evaluator_id == "fact_check":
        assert threshold == [("bad", "fact_check", "HIGH")]
    else:
        assert sorted(threshold) == [("bad", primary, "HIGH"), ("flaky", primary, "HIGH")]
        described = {p["problem_attrs"]["model_name"]: p["description"] for p in problems if p["problem_type"] != "judge"}
        assert described["bad"].endswith(" (4 of 4 test cases on the wrong side).")
        # flaky's misses are the judge's unreadable answers, and the problem says so.
        assert " (3 of 4 test cases on the wrong side; 3 of them could not be checked (" in described["flaky"]
    unreliable = [p for p in problems if p["problem_type"] == "judge"]
    assert len(unreliable) == 1
    problem = unreliable[0]
    assert problem["severity"] == "HIGH"
    assert problem["description"] == ("Judge test-judge is unreliable on model flaky's answers: no usable answer "
                                      "for 75% of rows (limit 50%).")
    attrs = problem["problem_attrs"]
    assert (attrs["model_name"], attrs["judge"], attrs["parse_failure_rate"], attrs["parse_failure_threshold"],
            attrs["agreement_rate"]) == ("flaky", "test-judge", 0.75, 0.5, None)
    assert attrs["dataset_row_keys"] == [["t1", "flaky"], ["t2", "flaky"], ["t3", "flaky"]]


def test_report_names_the_judge(judged):
    result, _ = judged
    folder = _folder(result, "sexism")
    report = (folder / "work" / "report.md").read_text()
    assert "> Judge: test-judge (openai backend, model scripted-judge, http://127.0.0.1:" in report
    html = (result.run_dir / names.INDEX_HTML).read_text()
    assert html.count('<p class="note">Judge: test-judge (openai backend, model scripted-judge') == 7


def test_judge_text_is_escaped_in_html(judged):
    result, _ = judged
    folder = _folder(result, "fact_check")
    fragment = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text()
    assert "judge test-judge: score 0.2: Mars is &lt;b&gt;not&lt;/b&gt; blue &amp; red" in fragment
    assert "<b>not</b>" not in fragment


def test_journal_records_each_judge_answer_and_the_cache(judged):
    result, _ = judged
    events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text().splitlines()]
    fetched = [e for e in events if e["message"] == "fetched annotator response"]
    assert len(fetched) == 84
    sample = next(e for e in fetched if e["evaluator"] == "sexism" and e["test_case_key"] == "t2"
                  and e["model_key"] == "bad")
    assert sample["annotator"] == "test-judge" and sample["response"] == "true"
    assert sample["request"]["model"] == "scripted-judge" and sample["request"]["repeat"] == 0
    assert "Answer of bad to t2." in sample["request"]["messages"][0]["content"]
    info = [e for e in events if e["message"] == "cache info"]
    assert len(info) == 1 and (info[0]["start_count"], info[0]["end_count"], info[0]["writes"]) == (0, 84, 84)
    assert [e["message"] for e in events][-2:] == ["cache info", "finished run"]
    llm = json.loads((result.run_dir / names.RUN_JSON).read_text())["llm"]
    assert llm["default_judge"] == "test-judge"
    used = llm["used"]["test-judge"]
    assert {k: v for k, v in used.items() if k not in ("config", "call_seconds", "input_tokens", "output_tokens")} \
        == {"requests": 84, "cached": 0, "fetched": 84, "failed": 0, "retries": 0}
    # Tokens are the server's usage (whitespace words of the last user message, and of the answer), call by call.
    assert all(e["input_tokens"] == len(e["request"]["messages"][-1]["content"].split())
               and e["output_tokens"] == len(e["response"].split()) for e in fetched)
    assert (used["input_tokens"], used["output_tokens"]) == (sum(e["input_tokens"] for e in fetched),
                                                             sum(e["output_tokens"] for e in fetched))


@pytest.mark.parametrize("evaluator_id, line", [
    ("contact_information", 'Your response must be single word, either "present" or "absent"'),
    ("language_mismatch", "[QUESTION]: {{QUESTION}}"),
    ("sexism", "[Text]: {{QUESTION}} {{ACTUAL_ANSWER}}"),
    ("stereotypes", "RESPONSE: {{ACTUAL_ANSWER}}"),
    ("summarization_judge", "[Original Document]: {{QUESTION}}"),
    ("byop", "Text: {INPUT} {ACTUAL_OUTPUT}"),
    ("fact_check", "respond with the evaluation score alone: one whole number from 0 to 10"),
])
def test_describe_shows_the_prompt(evaluator_id, line):
    result = CliRunner().invoke(cli, ["describe", evaluator_id])
    assert result.exit_code == 0, result.output
    assert "Judge prompt (placeholders are filled from each row):" in result.output
    assert line in result.output
