"""Answer Relevancy (Sentence Similarity): the answer sentence closest to the question."""

from __future__ import annotations

import numpy as np
import pytest

from sonar_core import Input
from sonar_core.testing import make_context

from semantic_helpers import TOLERANCE, evaluator, model_vectors, row
from sonar_plugins.semantic.answer_relevancy import NO_SENTENCES
from sonar_plugins.semantic.answer_relevancy import AnswerRelevancySentenceSimilarityEvaluator as Relevancy


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def test_declaration_follows_the_catalogue():
    assert Relevancy.id == "answer_relevancy_sentence_similarity"
    assert Relevancy.required_inputs == (Input.QUESTION, Input.ACTUAL_ANSWER)
    [metric] = Relevancy.metrics
    assert (metric.key, metric.threshold, metric.higher_is_better) == ("answer_relevancy", 0.75, True)


def test_an_answer_sentence_equal_to_the_question_scores_one(ctx):
    question = "How long do I have to report a car accident?"
    [result] = evaluator(Relevancy, ctx).evaluate([row(input=question, actual_output=f"Good question. {question}")])
    assert result.values["answer_relevancy"] == pytest.approx(1.0, abs=TOLERANCE)
    assert result.details == {"most_relevant_sentence": question}


def test_score_is_the_best_sentence_similarity_to_the_question(ctx):
    question = "What is the grace period for a late premium payment?"
    answer = ["Thanks for asking.", "You have 31 days after the due date to pay.", "Cats are mammals."]
    [result] = evaluator(Relevancy, ctx).evaluate([row(input=question, actual_output=" ".join(answer))])
    vectors = model_vectors(question, *answer)
    scores = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    assert result.values["answer_relevancy"] == pytest.approx(scores.max(), abs=TOLERANCE)
    assert result.details == {"most_relevant_sentence": answer[int(scores.argmax())]}
    data = result.actual_output_meta[0]["data"]
    assert [(d["text"], d["metrics"]["answer_relevancy"]) for d in data] == [
        (sentence, pytest.approx(float(score), abs=TOLERANCE)) for sentence, score in zip(answer, scores)]


def test_an_empty_answer_scores_zero(ctx):
    [result] = evaluator(Relevancy, ctx).evaluate([row(input="Why?", actual_output="")])
    assert (result.values, result.error_message) == ({"answer_relevancy": 0.0}, NO_SENTENCES)
