"""Answer Semantic Similarity with the embedded MiniLM model."""

from __future__ import annotations

import pytest

from sonar_core import Input
from sonar_core.testing import make_context

from semantic_helpers import TOLERANCE, cosine, evaluator, row
from sonar_plugins.semantic.answer_similarity import NO_WORDS, AnswerSemanticSimilarityEvaluator as Similarity


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def test_declaration_follows_the_catalogue():
    assert Similarity.id == "answer_semantic_similarity"
    assert Similarity.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    [metric] = Similarity.metrics
    assert (metric.key, metric.threshold, metric.higher_is_better, metric.value_range) == (
        "answer_similarity", 0.75, True, (0.0, 1.0))
    assert Similarity.model_params == {"embedding_model": "embedding"}
    assert Similarity.validate_params({})["embedding_model"] == "all-MiniLM-L6-v2"


def test_identical_answers_score_one(ctx):
    text = "Policyholders must report an accident within 30 days. Late reports may reduce the payment."
    [result] = evaluator(Similarity, ctx).evaluate([row(expected_output=text, actual_output=text)])
    assert result.values["answer_similarity"] == pytest.approx(1.0, abs=TOLERANCE)


def test_score_is_the_cosine_of_the_two_whole_answers(ctx):
    expected, actual = "You must report the accident within 30 days.", "Accidents have to be reported in a month."
    [result] = evaluator(Similarity, ctx).evaluate([row(expected_output=expected, actual_output=actual)])
    assert result.values["answer_similarity"] == pytest.approx(cosine(expected, actual), abs=TOLERANCE)
    assert 0.3 < result.values["answer_similarity"] < 0.95  # related, not identical


def test_an_answer_without_words_scores_zero(ctx):
    results = evaluator(Similarity, ctx).evaluate([row(expected_output="Paris.", actual_output=""),
                                                  row(expected_output="Paris.", actual_output=" ... ")])
    assert [(r.values, r.error_message) for r in results] == [({"answer_similarity": 0.0}, NO_WORDS)] * 2


def test_one_embedding_request_per_batch_for_its_unique_texts():
    ctx = make_context(device="cpu")  # a fresh service, to read its counters
    rows = [row("m1", expected_output="Paris.", actual_output="Paris."),
            row("m2", expected_output="Paris.", actual_output="Lyon."),
            row("m3", expected_output="Paris.", actual_output="It is Paris.")]
    evaluator(Similarity, ctx).evaluate(rows)
    counters = ctx.embeddings.stats["all-MiniLM-L6-v2"]
    # Six texts in the rows, three of them distinct: Paris., Lyon., It is Paris.
    assert counters["calls"] == 1 and counters["requested"] == 3
