"""GPTScore's model choice: the catalogue's list plus the embedded SmolLM2 (anything else is a one-line error),
and sequence-to-sequence models (flan-t5) scored as the GPTScore paper does: the decoder's log-likelihood of
the target given the prompt, checked on a tiny T5 against log-softmax sums computed here."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoTokenizer, T5ForConditionalGeneration

import sonar_core
from sonar_core import ConfigError, ParameterError
from sonar_core.testing import make_row, score_rows
from sonar_plugins.language_model.gptscore import CATALOGUE_MODELS
from sonar_plugins.language_model.gptscore_summarization_reference import GptScoreSummarizationReferenceEvaluator
from sonar_plugins.language_model.gptscore_translation import GptScoreTranslationEvaluator
from tiny_models import seq2seq_lm_folder

REFERENCE = "The storm caused damage to many homes in the state."
ANSWER = "The cat sat on the mat."
SHORT = "Paris is the capital of France."


@pytest.fixture(scope="module")
def t5_folder(tmp_path_factory):
    return seq2seq_lm_folder(tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture(scope="module")
def decoder_anll(t5_folder):
    """ANLL of ``target`` given ``source`` under the T5: one unbatched pass, the decoder fed by hand."""
    model = T5ForConditionalGeneration.from_pretrained(str(t5_folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(t5_folder))

    def compute(source: str, target: str) -> float:
        src = tokenizer(source)["input_ids"]
        tgt = tokenizer(target.strip())["input_ids"]
        assert src[-1] == tgt[-1] == tokenizer.eos_token_id  # both end with </s>, as T5's tokenizer writes them
        decoder_input = [model.config.decoder_start_token_id] + tgt[:-1]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([decoder_input])).logits[0]
        log_probs = torch.log_softmax(logits.double(), dim=-1)
        total = sum(log_probs[i, token].item() for i, token in enumerate(tgt))
        return -total / len(tgt)

    return compute


def test_a_t5_scores_the_target_with_its_decoder(t5_folder, decoder_anll):
    # two rows of different lengths in one batch: padding must not change a row's value
    rows = [make_row(key=f"t{n}::m", test_case_key=f"t{n}", model_key="m", expected_output=reference,
                     actual_output=answer) for n, (reference, answer) in enumerate([(REFERENCE, ANSWER),
                                                                                     (SHORT, REFERENCE)])]
    results = score_rows(GptScoreTranslationEvaluator, rows, gpt_score_model=str(t5_folder))
    instruction = GptScoreTranslationEvaluator.templates["accuracy"]
    for (reference, answer), result in zip([(REFERENCE, ANSWER), (SHORT, REFERENCE)], results):
        forward = decoder_anll(f"{instruction} {reference} In other words,", answer)
        backward = decoder_anll(f"{instruction} {answer} In other words,", reference)
        assert result.values["accuracy"] == pytest.approx((forward + backward) / 2, rel=1e-5)
        assert result.values["accuracy"] > 0


def test_a_t5_row_alone_scores_as_in_a_batch(t5_folder):
    rows = [make_row(key="a::m", test_case_key="a", model_key="m", expected_output=REFERENCE, actual_output=ANSWER),
            make_row(key="b::m", test_case_key="b", model_key="m", expected_output=SHORT, actual_output=SHORT)]
    together = score_rows(GptScoreSummarizationReferenceEvaluator, rows, gpt_score_model=str(t5_folder))
    [alone] = score_rows(GptScoreSummarizationReferenceEvaluator, rows[1:], gpt_score_model=str(t5_folder))
    assert alone.values == pytest.approx(together[1].values, rel=1e-5)


@pytest.mark.parametrize("model", list(CATALOGUE_MODELS) + ["SmolLM2-135M-Instruct", "smollm2"])
def test_the_catalogue_choices_and_the_embedded_default_are_accepted(model):
    assert GptScoreTranslationEvaluator.validate_params({"gpt_score_model": model})["gpt_score_model"] == model


def test_the_catalogue_list_is_the_catalogues():
    assert CATALOGUE_MODELS == (
        "google/flan-t5-small", "google/flan-t5-base", "google/flan-t5-large", "google/flan-t5-xl",
        "google/flan-t5-xxl", "facebook/opt-125m", "facebook/opt-350m", "facebook/opt-1.3b", "facebook/opt-2.7b",
        "facebook/opt-6.7b", "facebook/opt-13b", "facebook/opt-66b", "gpt2-medium", "gpt2-large", "gpt2-xl",
        "EleutherAI/gpt-j-6B")
    assert GptScoreTranslationEvaluator.validate_params({})["gpt_score_model"] == "SmolLM2-135M-Instruct"


@pytest.mark.parametrize("model", ["gpt-4o", "distilgpt2", "google/flan-t5-tiny"])
def test_an_unknown_model_is_a_one_line_error(model):
    with pytest.raises(ParameterError) as error:
        GptScoreTranslationEvaluator.validate_params({"gpt_score_model": model})
    assert str(error.value) == (
        "parameter 'gpt_score_model' of evaluator 'gptscore_machine_translation' must be one of the catalogue's "
        "models (" + ", ".join(CATALOGUE_MODELS) + f"), Sonar's embedded SmolLM2-135M-Instruct or a local model "
        f"folder, got '{model}'")
    assert "\n" not in str(error.value)


def test_a_run_naming_an_unknown_model_stops_before_scoring(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps([{"test_case_key": "t", "model_key": "m", "expected_output": REFERENCE,
                                    "actual_output": ANSWER}]), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^parameter 'gpt_score_model' of evaluator 'gptscore_machine_translation' "
                                          r"must be one of the catalogue's models .*got 'gpt-4o'$"):
        sonar_core.run(dataset=str(dataset), output_dir=str(tmp_path / "out"), run_id="r",
                       evaluators=[{"id": "gptscore_machine_translation", "params": {"gpt_score_model": "gpt-4o"}}])
