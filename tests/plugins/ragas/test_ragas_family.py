"""The seven RAGAS evaluators against the scripted judge (tests/ragas_judge.py): per-row values worked out by
hand, what the rows' details and messages say, parse failures, the response cache, and the HTML."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sonar_core
from sonar_core import names

from judge_server import JudgeServer, write_llm_configs
from ragas_judge import OFF_TOPIC_QUESTION, NOT_JSON, RagasJudge
from ragas_rows import (CASES, CONTEXT_PRECISION, CONTEXT_RECALL, CONTEXT_RELEVANCY, CORRECTNESS_COUNTS, FAITHFULNESS,
                        MODELS, rows, write_dataset)

SEVEN = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "ragas_context_relevance",
         "answer_correctness", "ragas"]
KEYS = [(case, model) for case in CASES for model in MODELS]
#: ragas's average precision divides by (useful chunks + 1e-10).
AP = 1e-9


@pytest.fixture(scope="module")
def encoder():
    from sonar_core.models import get_store

    return get_store().load_sentence_transformer("all-MiniLM-L6-v2", "cpu")


def cos(encoder, a: str, b: str) -> float:
    va, vb = encoder.encode([a, b], convert_to_numpy=True)
    return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The seven evaluators run twice on the ten rows with one response cache: (first, second, server, calls
    after the first run)."""
    tmp = tmp_path_factory.mktemp("ragas")
    with JudgeServer(default=RagasJudge(rows())) as server:
        configs = write_llm_configs(tmp / "llm.yaml", server.base_url, max_concurrency=8)
        common = {"dataset": str(write_dataset(tmp / "d.json")), "evaluators": SEVEN, "llm_configs": str(configs),
                  "llm_cache": str(tmp / "cache.sqlite"), "run_id": "r"}
        first = sonar_core.run(output_dir=str(tmp / "first"), **common)
        calls = server.calls
        second = sonar_core.run(output_dir=str(tmp / "second"), **common)
        yield first, second, server, calls


def _folder(result, evaluator_id):
    record = json.loads((result.run_dir / names.RUN_JSON).read_text())
    return next(result.run_dir / e["job_location"] for e in record["result"]["executed_explainers"]
                if e["evaluator_id"] == evaluator_id)


def _rows(result, evaluator_id):
    folder = _folder(result, evaluator_id)
    data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    return {(r["test_case_key"], r["model_key"]): r for r in data["results"]}


def test_runs_succeed_and_the_second_asks_the_judge_nothing(runs):
    first, second, server, calls = runs
    assert first.status == "success", first.message
    assert second.status == "success", second.message
    assert calls > 0 and server.calls == calls
    for evaluator_id in SEVEN:
        again = _rows(second, evaluator_id)
        assert {k: {m: v for m, v in r.items() if m != "result_error_message"} for k, r in again.items()} == \
            {k: {m: v for m, v in r.items() if m != "result_error_message"} for k, r in _rows(first, evaluator_id).items()}


def test_faithfulness_is_supported_claims_over_claims(runs):
    got = _rows(runs[0], "faithfulness")
    assert {k: got[k]["faithfulness"] for k in KEYS} == pytest.approx(FAITHFULNESS)
    weak = got[("c1", "weak")]
    assert weak["details"]["claims"] == [
        {"claim": "The Eiffel Tower is in Paris.", "supported": True, "reason": "stated in the context"},
        {"claim": "The Eiffel Tower opened in 1889.", "supported": True, "reason": "stated in the context"},
        {"claim": "The Eiffel Tower is painted gold.", "supported": False, "reason": "not in the context"},
        {"claim": "The Eiffel Tower is in Rome.", "supported": False, "reason": "not in the context"},
    ]
    assert weak["result_error_message"] == ("2 of 4 claims not supported by the context: 'The Eiffel Tower is painted "
                                            "gold.' (not in the context); 'The Eiffel Tower is in Rome.' (not in the "
                                            "context)")
    assert got[("c1", "good")]["result_error_message"] == ""


def test_one_malformed_answer_in_ten_is_one_counted_parse_failure(runs):
    got = _rows(runs[0], "faithfulness")
    scored = [k for k in KEYS if got[k]["faithfulness"] is not None]
    assert len(scored) == 9
    assert [k for k in KEYS if got[k]["faithfulness_parse_failures"] == 1.0] == [("c5", "weak")]
    assert got[("c5", "weak")]["result_error_message"] == (
        f"judge test-judge: the judge's answer is not the JSON ragas asked for; it answered '{NOT_JSON}'")
    board = json.loads((_folder(runs[0], "faithfulness") / "global_llm_heatmap_leaderboard" / "application_json"
                        / "leaderboard_0.json").read_text())
    assert board["data"]["weak"]["faithfulness_parse_failures"] == pytest.approx(0.2)
    assert board["data"]["weak"]["faithfulness"] == pytest.approx((0.5 + 0 + 0.5 + 2 / 3) / 4)


def test_answer_relevancy_is_the_mean_similarity_of_generated_questions(runs, encoder):
    got = _rows(runs[0], "answer_relevancy")
    off_topic = cos(encoder, CASES["c3"]["input"], OFF_TOPIC_QUESTION)
    expected = {k: 1.0 for k in KEYS}
    expected[("c2", "weak")] = 0.0  # noncommittal
    expected[("c3", "weak")] = off_topic
    assert {k: got[k]["answer_relevancy"] for k in KEYS} == pytest.approx(expected, abs=1e-5)
    assert [q["question"] for q in got[("c3", "weak")]["details"]["generated_questions"]] == [OFF_TOPIC_QUESTION] * 3
    assert got[("c3", "weak")]["details"]["generated_questions"][0]["similarity"] == pytest.approx(off_topic, abs=1e-5)
    assert got[("c3", "weak")]["result_error_message"] == (
        f"the answer answers other questions than the one asked: '{OFF_TOPIC_QUESTION}' ({off_topic:.2f})")
    assert got[("c2", "weak")]["result_error_message"] == (
        "the judge found the answer noncommittal (evasive or vague), which scores 0")


def test_context_precision_recall_and_relevancy(runs):
    precision, recall, relevancy = (_rows(runs[0], e) for e in ("context_precision", "context_recall",
                                                                "ragas_context_relevance"))
    for case, model in KEYS:
        assert precision[(case, model)]["context_precision"] == pytest.approx(CONTEXT_PRECISION[case], abs=AP)
        assert recall[(case, model)]["context_recall"] == CONTEXT_RECALL[case]
        assert relevancy[(case, model)]["ragas_context_relevance"] == CONTEXT_RELEVANCY[case]
    assert [(c["rank"], c["useful"]) for c in precision[("c1", "good")]["details"]["chunks"]] == [(1, True), (2, False), (3, True)]
    assert precision[("c2", "good")]["result_error_message"] == (
        "useful chunks at rank 2 of 2; ranked above a useful one but not useful: rank 1 (unrelated)")
    assert recall[("c4", "good")]["details"]["expected_answer_sentences"] == [
        {"sentence": "The sky is blue on a clear day.", "attributed": True, "reason": "in the context"},
        {"sentence": "Clouds are white.", "attributed": False, "reason": "not in the context"},
    ]
    assert [r["rating"] for r in relevancy[("c1", "good")]["details"]["ratings"]] == [1, 1]
    assert relevancy[("c1", "good")]["result_error_message"] == (
        "the judge rated the context's relevance to the question 1 and 1 (of 2)")


def test_answer_correctness_is_weighted_f1_and_similarity(runs, encoder):
    got = _rows(runs[0], "answer_correctness")
    for (case, model), counts in CORRECTNESS_COUNTS.items():
        row = got[(case, model)]
        if counts is None:
            assert row["answer_correctness"] is None and row["answer_correctness_parse_failures"] == 1.0
            continue
        tp, fp, fn = counts
        factuality = 0.0 if tp == 0 else tp / (tp + 0.5 * (fp + fn))
        similarity = cos(encoder, CASES[case]["expected_output"], CASES[case][model])
        assert row["answer_correctness_factuality"] == pytest.approx(factuality)
        assert row["answer_correctness_similarity"] == pytest.approx(similarity, abs=1e-5)
        assert row["answer_correctness"] == pytest.approx(0.75 * factuality + 0.25 * similarity, abs=1e-5)
    assert [s["statement"] for s in got[("c4", "weak")]["details"]["statements"]["FP"]] == ["Grass is green.",
                                                                                  "The sky is green at night."]
    assert got[("c4", "weak")]["result_error_message"] == (
        "1 statements match the expected answer, 2 not supported by it: 'Grass is green.'; 'The sky is green at "
        "night.', 1 of it missing: 'Clouds are white.'")


def test_ragas_is_the_harmonic_mean_of_the_four(runs, encoder):
    got = _rows(runs[0], "ragas")
    answer_relevancy = {k: 1.0 for k in KEYS}
    answer_relevancy[("c2", "weak")] = 0.0
    answer_relevancy[("c3", "weak")] = cos(encoder, CASES["c3"]["input"], OFF_TOPIC_QUESTION)
    for case, model in KEYS:
        row = got[(case, model)]
        parts = [FAITHFULNESS[(case, model)], answer_relevancy[(case, model)], CONTEXT_PRECISION[case],
                 CONTEXT_RECALL[case]]
        if parts[0] is None:
            assert row["ragas"] is None and row["ragas_parse_failures"] == 1.0
            assert row["result_error_message"] == (
                "judge test-judge: no RAGAS score, missing faithfulness: the judge's answer is not the JSON ragas "
                f"asked for; it answered '{NOT_JSON}'")
            assert row["answer_relevancy"] == pytest.approx(1.0)  # the other components are still there
            continue
        expected = 0.0 if min(parts) == 0 else 4 / sum(1 / p for p in parts)
        assert row["ragas"] == pytest.approx(expected, abs=1e-5), (case, model)
        assert row["ragas_parse_failures"] == 0.0
    # By hand: c1 good = 4 / (1 + 1 + 6/5 + 1); c2 weak has faithfulness 0.
    assert got[("c1", "good")]["ragas"] == pytest.approx(4 / 4.2, abs=1e-6)
    assert got[("c2", "weak")]["ragas"] == 0.0
    assert got[("c2", "weak")]["result_error_message"] == "lowest components: faithfulness 0.00, answer relevancy 0.00"


def test_html_shows_why_the_weakest_rows_score_low(runs):
    fragment = (_folder(runs[0], "faithfulness") / names.HTML_FRAGMENT / names.mime_dir(names.MIME_HTML)
                / f"{names.EXPLANATION_STEM}.html").read_text()
    assert ("2 of 4 claims not supported by the context: &#39;The Eiffel Tower is painted gold.&#39; (not in the "
            "context); &#39;The Eiffel Tower is in Rome.&#39; (not in the context)") in fragment


def test_failed_judge_calls_are_parse_failures_and_an_unreliable_judge_problem(judge_server, tmp_path):
    judge_server.default = RagasJudge(rows())
    judge_server.server_error_every = 1
    configs = write_llm_configs(tmp_path / "llm.yaml", judge_server.base_url, retries=0)
    result = sonar_core.run(dataset=str(write_dataset(tmp_path / "d.json")), evaluators=["context_recall"],
                            output_dir=str(tmp_path / "out"), run_id="r", llm_configs=str(configs), no_cache=True)
    assert result.status == "success", result.message
    got = _rows(result, "context_recall")
    assert all(r["context_recall"] is None and r["context_recall_parse_failures"] == 1.0 for r in got.values())
    assert all(r["result_error_message"].startswith("judge test-judge: judge call failed: ") for r in got.values())
    # One attempt per test case: ragas's own retry loop is off, and the two models' rows of a case ask the same
    # context-recall prompt (question, context, expected answer), asked once while it is in flight.
    assert judge_server.calls == 5
    problems = [p for p in result.problems if p["problem_type"] == "judge"]
    assert sorted(p["problem_attrs"]["model_name"] for p in problems) == ["good", "weak"]
    assert all(p["description"].endswith("no usable answer for 100% of rows (limit 20%).") for p in problems)


#: Sonar evaluator id -> (ragas metric class path, the column evaluate() names it)
REFERENCE = {
    "faithfulness": ("ragas.metrics._faithfulness.Faithfulness", "faithfulness"),
    "answer_relevancy": ("ragas.metrics._answer_relevance.AnswerRelevancy", "answer_relevancy"),
    "context_precision": ("ragas.metrics._context_precision.LLMContextPrecisionWithReference",
                          "llm_context_precision_with_reference"),
    "context_recall": ("ragas.metrics._context_recall.LLMContextRecall", "context_recall"),
    "ragas_context_relevance": ("ragas.metrics._nv_metrics.ContextRelevance", "nv_context_relevance"),
    "answer_correctness": ("ragas.metrics._answer_correctness.AnswerCorrectness", "answer_correctness"),
}


def test_values_equal_ragas_evaluate_on_the_same_server_and_embeddings(runs, encoder):
    """ragas's evaluate() with its own OpenAI-compatible client (LangChain ChatOpenAI) on a second server with the
    same script, and the same embedding model loaded directly: every row's value equals Sonar's."""
    import importlib
    import math

    from ragas_direct import evaluate_directly

    data = rows()
    metrics = []
    for path, _ in REFERENCE.values():
        module, name = path.rsplit(".", 1)
        metrics.append(getattr(importlib.import_module(module), name)())
    with JudgeServer(default=RagasJudge(data)) as server:
        reference = evaluate_directly(data, metrics, server.base_url, encoder, max_workers=8)
    keys = [(r["test_case_key"], r["model_key"]) for r in data]
    for evaluator_id, (_, column) in REFERENCE.items():
        sonar = _rows(runs[0], evaluator_id)
        for n, key in enumerate(keys):
            theirs, ours = reference[n][column], sonar[key][evaluator_id]
            if theirs is None or math.isnan(theirs):
                assert ours is None, (evaluator_id, key, ours)
            else:
                assert ours == pytest.approx(theirs, abs=1e-6), (evaluator_id, key)
    sonar = _rows(runs[0], "ragas")
    for n, key in enumerate(keys):
        parts = [reference[n][c] for c in ("faithfulness", "answer_relevancy", "llm_context_precision_with_reference",
                                           "context_recall")]
        if any(math.isnan(p) for p in parts):
            assert sonar[key]["ragas"] is None
        else:
            expected = 0.0 if min(parts) <= 0 else 4 / sum(1 / p for p in parts)
            assert sonar[key]["ragas"] == pytest.approx(expected, abs=1e-6), key
    # The malformed answer is a NaN in ragas and a counted parse failure in Sonar.
    assert math.isnan(reference[keys.index(("c5", "weak"))]["faithfulness"])


def test_the_second_run_reads_finished_rows_back_instead_of_scoring_them(runs):
    # ragas re-renders and re-parses every prompt even with cached answers; the core keeps finished
    # rows (sonar_core.execution.row_cache), so a rerun scores only rows that were not scored (parse failures).
    first, second, _, _ = runs

    def cached_rows(result):
        events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text().splitlines()]
        return {e["evaluator"]: (e["rows"], e["total"]) for e in events if e["message"] == "using cached row results"}

    assert cached_rows(first) == {}
    expected = {}
    for evaluator_id in SEVEN:
        rows_first = _rows(first, evaluator_id)
        unscored = sum(1 for r in rows_first.values() if r[f"{evaluator_id}_parse_failures"] == 1.0)
        expected[evaluator_id] = (len(rows_first) - unscored, len(rows_first))
    assert cached_rows(second) == expected
    assert expected["faithfulness"] == (9, 10)


def _journal(result) -> list[dict]:
    return [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]


def test_ragas_takes_its_four_components_from_the_run_memo_and_asks_nothing(runs):
    """The four evaluators ran before RAGAS in the first run: RAGAS reuses their results (the failed one
    too), so it neither asks the judge nor reads its cache; six evaluators put one result per row each."""
    events = _journal(runs[0])
    asked = [e for e in events if e.get("annotator") and e.get("evaluator") == "ragas"]
    assert asked == []
    assert [e for e in events if e.get("annotator") and e.get("evaluator") == "faithfulness"] != []
    (memo,) = [e for e in events if e["message"] == "run memo info"]
    assert memo["namespaces"] == {"ragas": {"put": 60, "reused": 40}}
    # The reused components are the ones the four evaluators reported.
    ragas_rows = _rows(runs[0], "ragas")
    for component in ("faithfulness", "answer_relevancy", "context_precision", "context_recall"):
        own = _rows(runs[0], component)
        assert {k: ragas_rows[k][component] for k in KEYS} == {k: own[k][component] for k in KEYS}
    assert ragas_rows[("c5", "weak")]["ragas_parse_failures"] == 1.0


def test_the_memo_is_not_shared_across_judges(tmp_path):
    """RAGAS with another judge than faithfulness's computes its components itself."""
    with JudgeServer(default=RagasJudge(rows())) as server, JudgeServer(default=RagasJudge(rows())) as other:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=8)
        text = configs.read_text(encoding="utf-8")
        configs.write_text(text + text.split("llms:\n", 1)[1].replace("test-judge", "other-judge")
                           .replace(server.base_url, other.base_url), encoding="utf-8")
        result = sonar_core.run(dataset=str(write_dataset(tmp_path / "d.json")), output_dir=str(tmp_path / "out"),
                                evaluators=["faithfulness", {"id": "ragas", "params": {
                                    "custom_eval_judge_config_key": "other-judge"}}],
                                llm_configs=str(configs), llm_cache=str(tmp_path / "cache.sqlite"), run_id="r")
        assert result.status == "success", result.message
        faithfulness_calls = server.calls
        assert faithfulness_calls > 0 and other.calls > 0
    (memo,) = [e for e in _journal(result) if e["message"] == "run memo info"]
    assert memo["namespaces"] == {"ragas": {"put": 50, "reused": 0}}
