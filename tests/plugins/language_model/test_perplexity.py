"""Perplexity: lmppl on store-loaded causal LMs equals exp(mean token NLL) from the model's own logits."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from sonar_core.models import ModelMissingError, get_store
from sonar_core.testing import make_context, make_row, score_rows
from sonar_plugins.language_model.perplexity import PerplexityEvaluator
from tiny_models import causal_lm_folder

TEXTS = [
    "The cat sat on the mat.",
    "Paris is the capital of France, and the storm caused damage to many homes in the state.",
    "Customers can file a claim online.",
    "Stock prices fell sharply on Monday.",
]


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def lm_folder(request, tmp_path_factory):
    return causal_lm_folder(tmp_path_factory.mktemp(request.param), request.param)


def expected_perplexity(folder, text: str) -> float:
    """exp(mean NLL) of the text's tokens 2..n, each from its prefix, one text at a time, no special tokens."""
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(ids).logits[0]
    log_probs = torch.log_softmax(logits.double(), dim=-1)
    nll = [-log_probs[i - 1, ids[0, i]].item() for i in range(1, ids.shape[1])]
    return math.exp(sum(nll) / len(nll))


def rows(texts):
    return [make_row(test_case_key=f"t{i}", model_key="m", actual_output=text) for i, text in enumerate(texts)]


def test_perplexity_is_exp_of_the_mean_token_nll_of_the_models_logits(lm_folder):
    # Texts of different lengths share padded batches: each must score as it would alone.
    results = score_rows(PerplexityEvaluator, rows(TEXTS), perplexity_model=str(lm_folder))
    for text, result in zip(TEXTS, results):
        assert result.values["perplexity"] == pytest.approx(expected_perplexity(lm_folder, text), rel=1e-4)
        assert result.error_message is None


def test_special_tokens_are_not_scored(lm_folder):
    # The Llama fixture's tokenizer adds <s> by default (as the converted SmolLM2 one adds <|im_start|>).
    tokenizer = AutoTokenizer.from_pretrained(str(lm_folder))
    plain = len(tokenizer(TEXTS[0], add_special_tokens=False)["input_ids"])
    [result] = score_rows(PerplexityEvaluator, rows(TEXTS[:1]), perplexity_model=str(lm_folder))
    assert result.details == {"tokens": plain}


def test_an_answer_of_one_token_is_left_unscored(lm_folder):
    assert len(AutoTokenizer.from_pretrained(str(lm_folder))(".", add_special_tokens=False)["input_ids"]) == 1
    [result] = score_rows(PerplexityEvaluator, rows(["."]), perplexity_model=str(lm_folder))
    assert result.values == {"perplexity": None}
    assert result.error_message == "the answer has fewer than 2 tokens: no token to predict from a previous one"


def test_the_model_is_loaded_once_and_shared_with_the_store(lm_folder):
    store = get_store()
    score_rows(PerplexityEvaluator, rows(TEXTS[:1]), perplexity_model=str(lm_folder))
    loads = len(store.loads)
    score_rows(PerplexityEvaluator, rows(TEXTS[1:2]), perplexity_model=str(lm_folder))
    assert len(store.loads) == loads
    model, _ = store.load_causal_lm(str(lm_folder), "cpu")
    from sonar_plugins.language_model.loaders import load_perplexity_lm

    assert load_perplexity_lm(store, str(lm_folder), "cpu").model is model


def test_a_missing_model_is_one_line_naming_it(tmp_path):
    evaluator = PerplexityEvaluator(PerplexityEvaluator.validate_params({"perplexity_model": "distilgpt2"}),
                                    make_context())
    with pytest.raises(ModelMissingError) as error:
        list(evaluator.evaluate(rows(TEXTS[:1])))
    assert str(error.value) == (
        "model 'distilgpt2' is not available: download it on a connected machine (huggingface-cli download "
        "distilgpt2) and copy the Hugging Face cache, or pass the model's local folder")


def smollm2_prepared() -> bool:
    try:
        get_store().resolve("smollm2")
    except ModelMissingError:
        return False
    return True


@pytest.mark.skipif(not smollm2_prepared(),
                    reason="SmolLM2-135M-Instruct is not prepared (run `sonar models prepare smollm2`)")
def test_a_natural_sentence_is_far_more_likely_than_its_scrambled_words_on_smollm2():
    natural = "The quick brown fox jumps over the lazy dog while the farmer watches from the porch."
    scrambled = "porch fox the over while lazy farmer quick the jumps brown the watches dog from the."
    results = score_rows(PerplexityEvaluator, rows([natural, scrambled]))
    good, bad = (r.values["perplexity"] for r in results)
    assert good * 5 < bad, (good, bad)
