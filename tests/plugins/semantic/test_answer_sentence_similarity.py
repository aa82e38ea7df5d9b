"""Answer Semantic Sentence Similarity: per-sentence best matches, their mean and minimum."""

from __future__ import annotations

import numpy as np
import pytest

from sonar_core import Input
from sonar_core.testing import make_context

from semantic_helpers import TOLERANCE, evaluator, model_vectors, row
from sonar_plugins.semantic.answer_sentence_similarity import AnswerSemanticSentenceSimilarityEvaluator as Sentences


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def test_declaration_follows_the_catalogue():
    assert Sentences.id == "answer_semantic_sentence_similarity"
    assert Sentences.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    assert [(m.key, m.threshold, m.higher_is_better, m.is_primary) for m in Sentences.metrics] == [
        ("mean_answer_similarity", 0.75, True, True), ("min_answer_similarity", 0.75, True, False)]
    assert {"embedding_model", "split_on_newlines", "max_sentence_words"} <= set(Sentences.validate_params({}))


def test_identical_answers_score_one_on_both_metrics(ctx):
    text = "Paris is the capital of France. The Eiffel Tower is in Paris.\nIt opened in 1889"
    [result] = evaluator(Sentences, ctx).evaluate([row(expected_output=text, actual_output=text)])
    assert result.values["mean_answer_similarity"] == pytest.approx(1.0, abs=TOLERANCE)
    assert result.values["min_answer_similarity"] == pytest.approx(1.0, abs=TOLERANCE)
    assert [d["text"] for d in result.actual_output_meta[0]["data"]] == [
        "Paris is the capital of France.", "The Eiffel Tower is in Paris.", "It opened in 1889"]


def test_mean_and_min_of_each_answer_sentences_best_match(ctx):
    answer = ["Paris is the capital of France.", "It has a famous iron tower.", "Bananas are yellow."]
    expected = ["The capital of France is Paris.", "The Eiffel Tower stands in Paris."]
    [result] = evaluator(Sentences, ctx).evaluate([row(expected_output=" ".join(expected),
                                                       actual_output=" ".join(answer))])
    vectors = model_vectors(*answer, *expected)
    similarity = np.clip(vectors[:3] @ vectors[3:].T, 0.0, 1.0)  # 3 answer x 2 expected sentences
    best = similarity.max(axis=1)
    assert result.values["mean_answer_similarity"] == pytest.approx(best.mean(), abs=TOLERANCE)
    assert result.values["min_answer_similarity"] == pytest.approx(best.min(), abs=TOLERANCE)
    # The banana sentence is the one furthest from the ground truth.
    assert best.argmin() == 2 and result.details == {"least_similar_sentence": "Bananas are yellow."}
    [meta] = result.actual_output_meta
    assert meta["tokenization"] == "sentence_level_punkt"
    assert [d["text"] for d in meta["data"]] == answer
    assert [d["metrics"]["answer_similarity"] for d in meta["data"]] == pytest.approx(best.tolist(), abs=TOLERANCE)
    assert [d["meta"]["closest_expected_sentence"] for d in meta["data"]] == [
        expected[int(i)] for i in similarity.argmax(axis=1)]


def test_no_sentence_with_words_scores_zero(ctx):
    results = evaluator(Sentences, ctx).evaluate([row(expected_output="Paris.", actual_output="?!"),
                                                 row(expected_output="...", actual_output="Paris.")])
    assert [r.values for r in results] == [{"mean_answer_similarity": 0.0, "min_answer_similarity": 0.0}] * 2
    assert [r.error_message for r in results] == [
        "the actual answer has no sentence with words to compare",
        "the expected answer has no sentence with words to compare"]
