"""Context Relevancy (Soft Recall and Precision): chunk relevancies, their maximum and mean."""

from __future__ import annotations

import numpy as np
import pytest

from sonar_core import Input
from sonar_core.testing import make_context

from semantic_helpers import TOLERANCE, evaluator, model_vectors, row
from sonar_plugins.semantic.context_relevancy import NO_SENTENCES
from sonar_plugins.semantic.context_relevancy import ContextRelevancySoftRecallPrecisionEvaluator as Relevancy

QUESTION = "How long do I have to report a car accident?"


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def test_declaration_follows_the_catalogue():
    assert Relevancy.id == "context_relevancy_soft_recall_precision"
    assert Relevancy.required_inputs == (Input.QUESTION, Input.RETRIEVED_CONTEXT)
    assert [(m.key, m.threshold, m.higher_is_better, m.is_primary) for m in Relevancy.metrics] == [
        ("recall_relevancy", 0.75, True, True), ("precision_relevancy", 0.75, True, False)]


def test_a_chunk_holding_the_question_gives_recall_one(ctx):
    chunks = [f"Read this first. {QUESTION}", "Storm damage must be reported within two months."]
    [result] = evaluator(Relevancy, ctx).evaluate([row(input=QUESTION, context=chunks)])
    assert result.values["recall_relevancy"] == pytest.approx(1.0, abs=TOLERANCE)
    assert result.details["chunk_relevancy"][0] == pytest.approx(1.0, abs=TOLERANCE)


def test_soft_recall_is_the_best_chunk_and_precision_the_mean_chunk(ctx):
    chunks = ["Accidents must be reported within 30 days. Late reports may reduce the payment.",
              "Our offices are closed on Sundays.",
              "  ---  ",
              "Claims can be filed in the app.\nStorm damage: two months."]
    [result] = evaluator(Relevancy, ctx).evaluate([row(input=QUESTION, context=chunks)])
    sentences = [["Accidents must be reported within 30 days.", "Late reports may reduce the payment."],
                 ["Our offices are closed on Sundays."],
                 [],  # no letter or digit: left out
                 ["Claims can be filed in the app.", "Storm damage: two months."]]
    vectors = model_vectors(QUESTION, *(s for chunk in sentences for s in chunk))
    scores = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    per_chunk = [scores[0:2].max(), scores[2], scores[3:5].max()]  # chunk relevancy = best sentence
    assert result.values["recall_relevancy"] == pytest.approx(max(per_chunk), abs=TOLERANCE)
    assert result.values["precision_relevancy"] == pytest.approx(sum(per_chunk) / 3, abs=TOLERANCE)
    relevancy = result.details["chunk_relevancy"]
    assert relevancy[2] is None
    assert [relevancy[0], relevancy[1], relevancy[3]] == pytest.approx([float(v) for v in per_chunk], abs=TOLERANCE)


def test_chunks_without_words_score_zero(ctx):
    [result] = evaluator(Relevancy, ctx).evaluate([row(input=QUESTION, context=["...", "— —"])])
    assert result.values == {"recall_relevancy": 0.0, "precision_relevancy": 0.0}
    assert result.error_message == NO_SENTENCES
