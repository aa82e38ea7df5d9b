"""Groundedness (Semantic Similarity): the least supported answer sentence sets the score."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sonar_core
from sonar_core import Input, names
from sonar_core.testing import make_context

from semantic_helpers import TOLERANCE, evaluator, model_vectors, row
from sonar_plugins.semantic.groundedness import EMPTY_EMBEDDING, GroundednessSemanticSimilarityEvaluator as Groundedness

CONTEXT = ["Paris is the capital of France. The Louvre is a museum in Paris.", "France uses the euro."]
CONTEXT_SENTENCES = ["Paris is the capital of France.", "The Louvre is a museum in Paris.", "France uses the euro."]
INVENTED = "The moon is made of green cheese."


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def best_context_match(sentence: str) -> tuple[float, str]:
    """The model's own similarity of ``sentence`` to its closest context sentence, computed here."""
    vectors = model_vectors(sentence, *CONTEXT_SENTENCES)
    scores = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    return float(scores.max()), CONTEXT_SENTENCES[int(scores.argmax())]


def test_declaration_follows_the_catalogue():
    assert Groundedness.id == "groundedness_semantic_similarity"
    assert Groundedness.required_inputs == (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    assert Groundedness.compatibility == ("rag",)
    [metric] = Groundedness.metrics
    assert (metric.key, metric.threshold, metric.higher_is_better, metric.is_primary) == ("groundedness", 0.75,
                                                                                          True, True)


def test_an_answer_copied_from_the_context_scores_one(ctx):
    [result] = evaluator(Groundedness, ctx).evaluate([row(context=CONTEXT, actual_output=CONTEXT[0])])
    assert result.values["groundedness"] == pytest.approx(1.0, abs=TOLERANCE)


def test_a_sentence_absent_from_the_context_drives_the_score_to_its_best_match(ctx):
    answer = f"Paris is the capital of France. {INVENTED}"
    [result] = evaluator(Groundedness, ctx).evaluate([row(context=CONTEXT, actual_output=answer)])
    expected_score, expected_support = best_context_match(INVENTED)
    assert expected_score < 0.5  # nothing in the context is about the moon
    assert result.values["groundedness"] == pytest.approx(expected_score, abs=TOLERANCE)
    assert result.details == {"least_grounded_sentence": INVENTED, "closest_context_sentence": expected_support}
    [meta] = result.actual_output_meta
    assert meta["tokenization"] == "sentence_level_punkt"
    grounded, invented = meta["data"]
    assert grounded["text"] == "Paris is the capital of France."
    assert grounded["metrics"]["groundedness"] == pytest.approx(1.0, abs=TOLERANCE)
    assert grounded["meta"] == {"closest_context_sentence": "Paris is the capital of France.", "context_chunk": 0}
    assert invented["text"] == INVENTED
    assert invented["metrics"]["groundedness"] == pytest.approx(expected_score, abs=TOLERANCE)
    assert invented["meta"]["closest_context_sentence"] == expected_support


def test_an_answer_without_words_has_an_empty_embedding_and_no_score(ctx):
    ev = evaluator(Groundedness, ctx)
    rows = [row("m1", "tc1", context=CONTEXT, actual_output=""), row("m1", "tc2", context=CONTEXT, actual_output="…"),
            row("m2", "tc1", context=CONTEXT, actual_output="Paris is the capital of France.")]
    results = list(ev.evaluate(rows))
    assert [r.values["groundedness"] for r in results[:2]] == [None, None]
    assert [r.error_message for r in results[:2]] == [EMPTY_EMBEDDING] * 2
    [problem] = ev.extra_problems(list(zip(rows, results)))
    assert problem["description"] == ("Model m1: 2 actual answer(s) hold no sentence with words, so their embedding "
                                      "is empty and groundedness could not be computed: tc1, tc2")
    assert problem["severity"] == "MEDIUM"
    assert problem["problem_attrs"]["dataset_row_keys"] == [["tc1", "m1"], ["tc2", "m1"]]


def test_a_run_reports_the_least_grounded_sentence_and_the_empty_embedding_problem(tmp_path):
    rows = [
        {"test_case_key": "tc1", "model_key": "faithful", "input": "q", "context": CONTEXT,
         "actual_output": "Paris is the capital of France."},
        {"test_case_key": "tc1", "model_key": "dreamer", "input": "q", "context": CONTEXT,
         "actual_output": f"Paris is the capital of France. {INVENTED}"},
        {"test_case_key": "tc2", "model_key": "dreamer", "input": "q", "context": CONTEXT,
         "actual_output": "The Louvre is a museum in Paris."},
        {"test_case_key": "tc2", "model_key": "faithful", "input": "q", "context": CONTEXT, "actual_output": "..."},
    ]
    dataset = tmp_path / "rag.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    result = sonar_core.run(dataset=str(dataset), evaluators=["groundedness_semantic_similarity"],
                            output_dir=str(tmp_path), run_id="g")
    assert result.status == "success", result.message
    folder = next(result.run_dir.glob("explainer_*"))
    score, support = best_context_match(INVENTED)
    insights = json.loads((folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE).read_text(encoding="utf-8"))
    [own] = [i for i in insights if "least grounded" in i["description"]]
    assert own["description"] == (f"The least grounded answer sentence of dreamer is \"{INVENTED}\" (test case tc1, "
                                  f"groundedness {score:.4f}); its closest context sentence is \"{support}\".")
    assert own["insight_type"] == "weak-point" and own["evaluator_id"] == "groundedness_semantic_similarity"
    assert own["insight_attrs"]["groundedness"] == pytest.approx(score, abs=TOLERANCE)
    assert own["insight_attrs"]["metric_threshold"] == 0.75
    problems = json.loads((folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE).read_text(encoding="utf-8"))
    assert [p["description"] for p in problems if "embedding is empty" in p["description"]] == [
        "Model faithful: 1 actual answer(s) hold no sentence with words, so their embedding is empty and "
        "groundedness could not be computed: tc2"]
    results = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    dreamer = next(r for r in results["results"] if r["model_key"] == "dreamer" and r["test_case_key"] == "tc1")
    assert [d["text"] for d in dreamer["actual_output_meta"][0]["data"]] == ["Paris is the capital of France.",
                                                                            INVENTED]
