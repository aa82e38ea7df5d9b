"""GPTScore: the catalogue's prompts, ANLL of the scored tokens from the model's own logits, both directions."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from sonar_core import ModelMissingError
from sonar_core.testing import make_row, score_rows
from sonar_plugins.language_model.gptscore_question_answering import GptScoreQuestionAnsweringEvaluator
from sonar_plugins.language_model.gptscore_summarization import GptScoreSummarizationEvaluator
from sonar_plugins.language_model.gptscore_summarization_reference import GptScoreSummarizationReferenceEvaluator
from sonar_plugins.language_model.gptscore_translation import GptScoreTranslationEvaluator
from sonar_plugins.language_model.likelihood import length_batches
from tiny_models import causal_lm_folder

REFERENCE = "The storm caused damage to many homes in the state."
ANSWER = "The cat sat on the mat."
QUESTION = "Customers can file a claim online or by phone."


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def lm_folder(request, tmp_path_factory):
    return causal_lm_folder(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="module")
def anll(lm_folder):
    """ANLL of ``target`` after ``prefix``: full forward pass of one sequence, the model's full logits."""
    model = AutoModelForCausalLM.from_pretrained(str(lm_folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(lm_folder))

    def compute(prefix: str, target: str) -> float:
        p = tokenizer(prefix, add_special_tokens=False)["input_ids"]
        t = tokenizer(target, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([p + t])
        with torch.no_grad():
            log_probs = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
        nll = [-log_probs[len(p) + i - 1, token].item() for i, token in enumerate(t)]
        return sum(nll) / len(nll)

    return compute


def row(**fields):
    return make_row(test_case_key="t", model_key="m", **fields)


def test_summarization_with_reference_averages_both_directions(lm_folder, anll):
    [result] = score_rows(GptScoreSummarizationReferenceEvaluator,
                          [row(expected_output=REFERENCE, actual_output=ANSWER)], gpt_score_model=str(lm_folder))
    instruction = "Rewrite the following text with the same semantics."
    forward = anll(f"{instruction} {REFERENCE} In other words,", f" {ANSWER}")
    backward = anll(f"{instruction} {ANSWER} In other words,", f" {REFERENCE}")
    assert result.values["semantic_coverage"] == pytest.approx((forward + backward) / 2, rel=1e-5)
    fluency = "Rewrite the following text into a fluent and grammatical text."
    assert result.values["fluency"] == pytest.approx(
        (anll(f"{fluency} {REFERENCE} In other words,", f" {ANSWER}")
         + anll(f"{fluency} {ANSWER} In other words,", f" {REFERENCE}")) / 2, rel=1e-5)
    assert set(result.values) == {"semantic_coverage", "factuality", "informativeness", "coherence", "relevance",
                                  "fluency"}


def test_machine_translation_averages_both_directions(lm_folder, anll):
    [result] = score_rows(GptScoreTranslationEvaluator, [row(expected_output=REFERENCE, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    instruction = "Rewrite the following text with its core information and consistent facts:"
    expected = (anll(f"{instruction} {REFERENCE} In other words,", f" {ANSWER}")
                + anll(f"{instruction} {ANSWER} In other words,", f" {REFERENCE}")) / 2
    assert result.values["accuracy"] == pytest.approx(expected, rel=1e-5)
    assert set(result.values) == {"accuracy", "fluency", "multidimensional_quality_metrics"}


def test_summarization_without_reference_scores_the_tokens_after_tldr(lm_folder, anll):
    [result] = score_rows(GptScoreSummarizationEvaluator, [row(input=QUESTION, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    prefix = f"Generate factually consistent summary for the following text: {QUESTION}\nTl;dr\n"
    assert result.values["consistency"] == pytest.approx(anll(prefix, ANSWER), rel=1e-5)
    assert len(result.values) == 7


def test_question_answering_scores_answer_yes_after_the_conversation(lm_folder, anll):
    [result] = score_rows(GptScoreQuestionAnsweringEvaluator, [row(input=QUESTION, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    prefix = ("Answer the question based on the conversation between a human and AI.\n"
              "Question: Are the responses of AI interesting? (a) Yes. (b) No.\n"
              f"Conversation: human: {QUESTION}\nAI: {ANSWER}\n")
    assert result.values["interest"] == pytest.approx(anll(prefix, "Answer: Yes"), rel=1e-5)
    assert len(result.values) == 8


def test_rows_batched_together_score_as_they_would_alone(lm_folder):
    answers = [ANSWER, REFERENCE, "Paris is the capital of France.", QUESTION + " " + REFERENCE]
    rows = [make_row(test_case_key=f"t{i}", model_key="m", expected_output=REFERENCE, actual_output=a)
            for i, a in enumerate(answers)]
    together = score_rows(GptScoreTranslationEvaluator, rows, gpt_score_model=str(lm_folder))
    for one, result in zip(rows, together):
        [alone] = score_rows(GptScoreTranslationEvaluator, [one], gpt_score_model=str(lm_folder))
        for key, value in alone.values.items():
            assert result.values[key] == pytest.approx(value, rel=1e-5)


def test_length_batches_sort_by_length_and_respect_both_budgets():
    lengths = [5, 1, 9, 3, 9, 2]
    batches = list(length_batches(lengths, max_tokens=12, max_rows=3))
    # Three rows at most; then 5 and 9 together would pad to 2 x 9 = 18 tokens > 12.
    assert batches == [[1, 5, 3], [0], [2], [4]]
    assert sorted(i for b in batches for i in b) == list(range(6))


def test_a_missing_model_is_one_line_naming_it(tmp_path):
    missing = tmp_path / "nothing-here"
    with pytest.raises(ModelMissingError) as error:
        score_rows(GptScoreQuestionAnsweringEvaluator, [row(input=QUESTION, actual_output=ANSWER)],
                   gpt_score_model=str(missing))
    assert str(error.value) == f"model '{missing}': no such folder (give the folder of a saved model)"


def test_declarations_follow_the_catalogue():
    for cls in (GptScoreSummarizationReferenceEvaluator, GptScoreSummarizationEvaluator,
                GptScoreTranslationEvaluator, GptScoreQuestionAnsweringEvaluator):
        assert cls.model_params == {"gpt_score_model": "causal_lm"}
        for metric in cls.metrics:
            assert not metric.higher_is_better and metric.threshold == math.inf
            assert metric.value_range == (0.0, math.inf)
    assert GptScoreSummarizationReferenceEvaluator.primary_metric().key == "semantic_coverage"
    assert GptScoreTranslationEvaluator.primary_metric().key == "accuracy"
    assert GptScoreQuestionAnsweringEvaluator.primary_metric().key == "interest"
    assert GptScoreSummarizationEvaluator.primary_metric().key == "semantic_coverage"
