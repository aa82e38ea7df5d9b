"""Toxicity (detoxify checkpoint, HF folder, alt-profanity-check) and fairness bias on fixture classifiers."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification

from sonar_core import ModelMissingError
from sonar_core.testing import make_context, make_row, score_rows
from sonar_plugins.fairness.fairness_bias import FairnessBiasEvaluator
from sonar_plugins.fairness.toxicity import ToxicityEvaluator
from tiny_models import classifier_folder

JIGSAW = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
BIASES = [-2.0, -3.0, 0.5, -1.0, 1.0, 0.0]


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def rows(*answers):
    return [make_row(test_case_key=f"t{i}", model_key="m", actual_output=a) for i, a in enumerate(answers)]


@pytest.fixture(scope="module")
def toxic_bert(tmp_path_factory):
    """A detoxify-style 6-label BERT whose logits are always BIASES (the unitary/toxic-bert layout)."""
    return classifier_folder(tmp_path_factory.mktemp("toxic-bert"), JIGSAW, bias=BIASES)


@pytest.fixture(scope="module")
def detoxify_checkpoint(tmp_path_factory):
    """A detoxify checkpoint file (config + state dict) whose base model is a local folder."""
    base = classifier_folder(tmp_path_factory.mktemp("bert-base"), ["LABEL_0", "LABEL_1"])
    torch.manual_seed(1)
    model = BertForSequenceClassification(BertConfig.from_pretrained(str(base), num_labels=6))
    path = tmp_path_factory.mktemp("ckpt") / "toxic_tiny.ckpt"
    torch.save({"config": {"arch": {"args": {"model_type": str(base), "model_name": "BertForSequenceClassification",
                                             "tokenizer_name": "BertTokenizer", "num_classes": 6}},
                           "dataset": {"args": {"classes": JIGSAW}}},
                "state_dict": model.state_dict()}, path)
    return path, model, base


def test_detoxify_folder_gives_six_sigmoid_scores_maximum_over_sentences(toxic_bert):
    [result] = score_rows(ToxicityEvaluator, rows("The cat sat on the mat. Paris is the capital of France."),
                          detoxify_model=str(toxic_bert))
    expected = dict(zip(["toxicity", "severe_toxicity", "obscene", "threat", "insult", "identity_attack"],
                        (sigmoid(b) for b in BIASES)))
    assert result.values == pytest.approx(expected, rel=1e-6)
    [meta] = result.actual_output_meta
    assert [s["text"] for s in meta["data"]] == ["The cat sat on the mat.", "Paris is the capital of France."]
    assert result.details == {"toxicity_model": str(toxic_bert)}


def test_detoxify_checkpoint_scores_are_the_models_sigmoids_and_the_row_takes_the_sentence_maximum(
        detoxify_checkpoint):
    path, model, base = detoxify_checkpoint
    from transformers import BertTokenizer

    tokenizer = BertTokenizer.from_pretrained(str(base))
    sentences = ["The cat sat on the mat.", "I hate the bad storm."]
    with torch.no_grad():
        probabilities = torch.sigmoid(model.eval()(**tokenizer(sentences, return_tensors="pt", padding=True)).logits)
    expected = probabilities.max(dim=0).values.tolist()
    [result] = score_rows(ToxicityEvaluator, rows(" ".join(sentences)), detoxify_model=str(path))
    keys = ["toxicity", "severe_toxicity", "obscene", "threat", "insult", "identity_attack"]
    assert [result.values[k] for k in keys] == pytest.approx(expected, rel=1e-5)


def test_without_detoxify_the_embedded_profanity_model_scores_toxicity_only(tmp_path):
    from sonar_core.models import get_store
    from sonar_plugins.fairness.loaders import load_profanity_model

    answers = ["You are a wonderful person.", "Thanks for asking. You are a fucking idiot."]
    results = score_rows(ToxicityEvaluator, rows(*answers), detoxify_model=str(tmp_path / "no-detoxify.ckpt"))
    profanity = load_profanity_model(get_store())
    clean = profanity.predict_prob([answers[0]])[0]
    worst = max(profanity.predict_prob(["Thanks for asking.", "You are a fucking idiot."]))
    assert results[0].values["toxicity"] == pytest.approx(clean)
    assert results[1].values["toxicity"] == pytest.approx(worst)
    assert worst > 0.9 > 0.1 > clean
    for result in results:
        assert [k for k, v in result.values.items() if v is None] == ["severe_toxicity", "obscene", "threat",
                                                                     "insult", "identity_attack"]
        # The mark the core turns into a LOW problem, a note in the report and run.json's fallbacks.
        assert result.details == {"toxicity_model": "alt-profanity-check", "measured_by_fallback": (
            "toxicity measured by alt-profanity-check; severe toxicity, obscenity, threat, insult and identity "
            "attack not measured")}


def test_the_report_table_names_the_model_that_scored(tmp_path):
    evaluator = ToxicityEvaluator(ToxicityEvaluator.validate_params({"detoxify_model": ""}), make_context())
    scored = list(zip(rows("Fine."), evaluator.evaluate(rows("Fine."))))
    [table] = evaluator.tables(scored)
    assert (table.title, table.columns, table.rows) == ("Model that scored toxicity", ["model", "metrics"],
                                                        [["alt-profanity-check", "toxicity"]])


def test_missing_detoxify_without_fallback_is_one_line():
    evaluator = ToxicityEvaluator(ToxicityEvaluator.validate_params({"fallback_model": ""}), make_context())
    with pytest.raises(ModelMissingError) as error:
        list(evaluator.evaluate(rows("Fine.")))
    assert str(error.value) == (
        "model 'detoxify-original' is not available: its checkpoint is not on the package registry: put "
        "toxic_original-c1212f89.ckpt (detoxify's release file) in the torch hub cache or pass its path, or "
        "download unitary/toxic-bert into the Hugging Face cache on a connected machine")


def test_a_checkpoint_whose_base_model_is_missing_names_both(tmp_path):
    path = tmp_path / "toxic.ckpt"
    torch.save({"config": {"arch": {"args": {"model_type": "bert-base-uncased",
                                             "model_name": "BertForSequenceClassification",
                                             "tokenizer_name": "BertTokenizer", "num_classes": 6}},
                           "dataset": {"args": {"classes": JIGSAW}}}, "state_dict": {}}, path)
    with pytest.raises(ModelMissingError) as error:
        score_rows(ToxicityEvaluator, rows("Fine."), detoxify_model=str(path))
    assert str(error.value) == (
        "detoxify checkpoint toxic.ckpt needs its base model's config and tokenizer: model 'bert-base-uncased' is "
        "not available offline: it is not a local folder and not in the local Hugging Face cache; download it on "
        "a connected machine (huggingface-cli download bert-base-uncased) and copy the cache, or pass the "
        "model's local folder")


# -- fairness bias ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bias_model(tmp_path_factory):
    """d4data's layout (DistilBERT, labels Biased / Non-biased) with fixed logits [ln 3, 0]: P(Biased) = 0.75."""
    return classifier_folder(tmp_path_factory.mktemp("bias"), ["Biased", "Non-biased"], architecture="distilbert",
                             bias=[math.log(3.0), 0.0], max_positions=64)


def test_fairness_bias_is_the_probability_of_the_biased_label(bias_model):
    results = score_rows(FairnessBiasEvaluator, rows("The cat sat on the mat.", "Good."), bias_model=str(bias_model))
    assert [r.values["fairness_bias"] for r in results] == pytest.approx([0.75, 0.75], rel=1e-6)


def test_answers_longer_than_the_model_reads_are_cut_and_reported(bias_model):
    long_answer = " ".join(["the cat sat on the mat."] * 20)  # 20 x 7 tokens, with [CLS] and [SEP]: 142
    evaluator = FairnessBiasEvaluator(
        FairnessBiasEvaluator.validate_params({"bias_model": str(bias_model), "max_tokens": 64}), make_context())
    batch = rows("Good.", long_answer)
    results = list(evaluator.evaluate(batch))
    assert results[0].details == {"tokens": 4}  # [CLS] good . [SEP]
    assert results[1].details == {"tokens": 142, "scored_tokens": 64}
    assert results[1].values["fairness_bias"] == pytest.approx(0.75)
    [problem] = evaluator.extra_problems(list(zip(batch, results)))
    assert problem["description"] == ("Model m: 1 answer(s) are longer than 64 tokens; the bias classifier scored "
                                      "only their first 64 tokens, so their fairness bias score may be inaccurate.")
    assert problem["severity"] == "LOW"
    assert problem["problem_attrs"]["dataset_row_keys"] == [["t1", "m"]]


def test_fairness_bias_missing_model_is_one_line():
    with pytest.raises(ModelMissingError) as error:
        score_rows(FairnessBiasEvaluator, rows("Fine."))
    assert str(error.value) == (
        "model 'd4data/bias-detection-model' is not available: download it on a connected machine "
        "(huggingface-cli download d4data/bias-detection-model) and copy the Hugging Face cache, or pass the "
        "model's local folder")


def test_a_model_without_the_biased_label_is_named(tmp_path):
    folder = classifier_folder(tmp_path / "other", ["LABEL_0", "LABEL_1"])
    with pytest.raises(ValueError) as error:
        score_rows(FairnessBiasEvaluator, rows("Fine."), bias_model=str(folder))
    assert str(error.value) == ("the model has no label 'Biased' (its labels: LABEL_0, LABEL_1); "
                                "set parameter 'biased_label'")
