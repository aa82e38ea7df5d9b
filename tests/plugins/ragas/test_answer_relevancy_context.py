"""Answer relevancy requires the retrieved context, as the catalogue says: a row without it is skipped, and
the report says which row and why, while a row with it is scored as before."""

from __future__ import annotations

import json

import pytest

import sonar_core
from sonar_core import Input, names
from sonar_plugins.ragas.answer_relevancy import AnswerRelevancyEvaluator

from judge_server import JudgeServer, write_llm_configs
from ragas_judge import RagasJudge

QUESTION = "Who wrote Hamlet?"
ANSWER = "William Shakespeare wrote Hamlet."


def test_the_retrieved_context_is_a_required_input():
    assert AnswerRelevancyEvaluator.required_inputs == (Input.QUESTION, Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)


def test_a_row_without_context_is_skipped_with_its_reason(tmp_path):
    rows = [{"test_case_key": "with", "model_key": "m", "input": QUESTION, "context": ["Hamlet is a tragedy."],
             "expected_output": ANSWER, "actual_output": ANSWER},
            {"test_case_key": "without", "model_key": "m", "input": QUESTION, "context": [],
             "expected_output": ANSWER, "actual_output": ANSWER}]
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    with JudgeServer(default=RagasJudge(rows)) as server:
        result = sonar_core.run(dataset=str(dataset), evaluators=["answer_relevancy"], run_id="r",
                                output_dir=str(tmp_path / "out"),
                                llm_configs=str(write_llm_configs(tmp_path / "llm.yaml", server.base_url)),
                                llm_cache=str(tmp_path / "cache.sqlite"))
        # one row scored: one call asking for strictness (3) generated questions; none for "without"
        assert server.calls == 1 and server.requests[0].choices == 3
    assert result.status == "success", result.message
    (folder,) = result.run_dir.glob("explainer_*")
    scored = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    assert [r["test_case_key"] for r in scored["results"]] == ["with"]
    # the scripted judge repeats the question word for word: cosine 1
    assert scored["results"][0]["answer_relevancy"] == pytest.approx(1.0, abs=1e-5)
    problems = json.loads((folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE).read_text())
    skipped = [p for p in problems if p["problem_type"] == "dataset"]
    assert [p["description"] for p in skipped] == [
        "Model m: 1 row(s) have an empty retrieved context, which Answer Relevancy needs; they were skipped: without"]
    assert skipped[0]["severity"] == "HIGH"
