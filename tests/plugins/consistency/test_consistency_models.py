"""Hallucination (max over chunks) and summarization completeness / SummaC on fixture models and hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from sonar_core import ModelMissingError
from sonar_core.testing import make_context, make_row, score_rows
from sonar_plugins.consistency.completeness import completeness, snap_to_context, three_segment_distance
from sonar_plugins.consistency.hallucination import HallucinationEvaluator
from sonar_plugins.consistency.summac import PERCENTILE_BINS, summac_conv, summac_zs
from sonar_plugins.consistency.summarization_faithfulness import SummarizationFaithfulnessEvaluator
from tiny_models import classifier_folder

CHUNKS = ["The storm caused damage to many homes in the state.", "", "Paris is the capital of France."]
ANSWER = "Paris is the capital of France."


def probabilities(folder, premise: str, hypothesis: str) -> list[float]:
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    with torch.no_grad():
        return torch.softmax(model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0], -1).tolist()


@pytest.fixture(scope="module")
def hhem_like(tmp_path_factory):
    return classifier_folder(tmp_path_factory.mktemp("hhem"), ["hallucinated", "consistent"])


def test_hallucination_is_the_maximum_consistency_over_non_empty_chunks(hhem_like):
    [result] = score_rows(HallucinationEvaluator, [make_row(test_case_key="t", model_key="m", context=CHUNKS,
                                                            actual_output=ANSWER)],
                          hallucination_model=str(hhem_like))
    per_chunk = [probabilities(hhem_like, chunk, ANSWER)[1] for chunk in (CHUNKS[0], CHUNKS[2])]
    assert result.values["hallucination"] == pytest.approx(max(per_chunk), rel=1e-5)
    assert result.details["chunk_scores"] == [round(s, 4) for s in per_chunk]


def test_fixed_logits_give_the_hand_computed_probability(tmp_path):
    folder = classifier_folder(tmp_path / "fixed", ["hallucinated", "consistent"], bias=[0.0, math.log(3.0)])
    [result] = score_rows(HallucinationEvaluator, [make_row(test_case_key="t", model_key="m", context=CHUNKS,
                                                            actual_output=ANSWER)], hallucination_model=str(folder))
    assert result.values["hallucination"] == pytest.approx(0.75)


def test_hallucination_missing_model_is_one_line():
    with pytest.raises(ModelMissingError) as error:
        score_rows(HallucinationEvaluator, [make_row(test_case_key="t", model_key="m", context=CHUNKS,
                                                     actual_output=ANSWER)])
    assert str(error.value) == (
        "model 'vectara/hallucination_evaluation_model' is not available: download it and google/flan-t5-base "
        "(its tokenizer) on a connected machine (huggingface-cli download vectara/hallucination_evaluation_model) "
        "and copy the Hugging Face cache, or pass the model's local folder")


# -- SummaC and completeness -----------------------------------------------------------------------------


def test_summac_zs_subtracts_the_highest_contradiction_from_the_highest_entailment():
    entailment = np.array([[0.9, 0.1], [0.2, 0.6]])
    contradiction = np.array([[0.05, 0.5], [0.3, 0.1]])
    # Summary sentence 1: 0.9 - 0.3; sentence 2: 0.6 - 0.5.
    assert summac_zs(np.stack([entailment, contradiction])) == pytest.approx((0.6 + 0.1) / 2)


def conv_weights(mlp_weight=1.0):
    return {"mlp.weight": torch.full((1, len(PERCENTILE_BINS) - 1), mlp_weight), "mlp.bias": torch.zeros(1),
            "layer_final.weight": torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
            "layer_final.bias": torch.zeros(2)}


def test_summac_conv_applies_the_trained_layers_to_entailment_histograms():
    image = np.zeros((2, 2, 3))
    image[0] = [[0.95, 0.1, 0.5], [0.2, 0.999, 0.0]]
    # Each summary sentence's histogram counts its 2 document sentences: mlp (all ones) gives 2 per
    # sentence, the mean is 2, and layer_final gives logits [0, 2]: softmax[1] = e^2 / (1 + e^2).
    assert summac_conv(image, conv_weights()) == pytest.approx(math.exp(2) / (1 + math.exp(2)))


def test_three_segment_distance_and_snapping_by_hand():
    context = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]])
    # Longest segment 5 (between (4,0) and (0,3)); from its ends, the longest further segments are 4 and 3.
    assert three_segment_distance(context) == pytest.approx(12.0)
    summary = np.array([[0.5, 0.0], [10.0, 10.0], [3.9, 0.2]])
    # Median context distance is 4: (10, 10) is dropped, the others snap to (0,0) and (4,0).
    assert snap_to_context(summary, context).tolist() == [0, 1]
    assert completeness(context, summary) == pytest.approx(4.0 / 12.0)
    assert completeness(context, np.array([[10.0, 10.0]])) == 0.0


@pytest.fixture(scope="module")
def nli_and_conv(tmp_path_factory):
    folder = classifier_folder(tmp_path_factory.mktemp("nli"), ["entailment", "neutral", "contradiction"])
    weights = tmp_path_factory.mktemp("conv") / "conv.bin"
    torch.save(conv_weights(0.5), weights)
    return folder, weights


def test_summarization_evaluator_runs_the_nli_model_on_every_sentence_pair(nli_and_conv):
    folder, weights = nli_and_conv
    text = "The storm caused damage to many homes in the state. Customers can file a claim online or by phone."
    summary = "The storm caused damage to homes. Customers can file a claim."
    [result] = score_rows(SummarizationFaithfulnessEvaluator, [make_row(test_case_key="t", model_key="m", input=text,
                                                                        actual_output=summary)],
                          nli_model=str(folder), summac_conv_model=str(weights))
    documents = ["The storm caused damage to many homes in the state.", "Customers can file a claim online or by phone."]
    sentences = ["The storm caused damage to homes.", "Customers can file a claim."]
    image = np.zeros((2, 2, 2))
    for i, premise in enumerate(documents):
        for j, hypothesis in enumerate(sentences):
            p = probabilities(folder, premise, hypothesis)
            image[0, i, j], image[1, i, j] = p[0], p[2]
    assert result.values["faithfulness_summac_zs"] == pytest.approx(summac_zs(image), abs=1e-5)
    assert result.values["faithfulness_summac_conv"] == pytest.approx(summac_conv(image, conv_weights(0.5)), abs=1e-5)
    assert 0.0 <= result.values["completeness"] <= 1.0
    assert result.details == {"text_sentences": 2, "summary_sentences": 2}


def test_missing_summac_conv_weights_are_one_line(nli_and_conv):
    folder, _ = nli_and_conv
    evaluator = SummarizationFaithfulnessEvaluator(
        SummarizationFaithfulnessEvaluator.validate_params({"nli_model": str(folder)}), make_context())
    with pytest.raises(ModelMissingError) as error:
        list(evaluator.evaluate([make_row(test_case_key="t", model_key="m", input="A text here.",
                                          actual_output="A summary.")]))
    assert str(error.value) == (
        "model 'summac-conv-vitc' is not available: the weights are not on the package registry: copy "
        "summac_conv_vitc_sent_perc_e.bin from the SummaC repository into the store folder summac-conv-vitc/, or "
        "pass the file's path")
