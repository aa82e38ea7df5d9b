"""General Semantic Robustness with scripted hosts: WER equal to jiwer, BERTScore equal to an independent
computation from the fixture BERT's token vectors (and to the bert_score package where installed), the
determinism check, and the baseline of a host that answers differently every time."""

from __future__ import annotations

import math
from itertools import combinations

import jiwer
import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertModel

from sonar_core.hosts import Host, HostAnswer, HostPool
from sonar_core.models import ModelStore
from sonar_core.perturbations import derive_seed, perturb_many
from sonar_core.plugins import PluginManager
from sonar_core.testing import make_context, make_row
from sonar_plugins.robustness.bertscore import bertscore, encode_tokens
from sonar_plugins.robustness.general_semantic_robustness import GeneralSemanticRobustnessEvaluator as GSR
from sonar_plugins.robustness.wer import word_error_rate
from tiny_models import bert_encoder_folder

QUESTION = "What is the capital of France?"
ORIGINAL = "paris is the capital of france"
#: Answers to the unchanged question at repeat 1 and 2 (the baseline samples of a sampling model).
REPEATS = {1: "paris is the capital city of france", 2: "paris is a capital of france"}
PERTURBED = "berlin is the capital of germany"


class ScriptedHost(Host):
    """Answers ORIGINAL to the question (REPEATS[r] at repeat r when ``varies``), PERTURBED to anything else."""

    kind = "python"

    def __init__(self, key: str, *, deterministic: bool = False, varies: bool = False, fail_on: str = "") -> None:
        super().__init__(key, deterministic=deterministic)
        self.varies, self.fail_on = varies, fail_on
        self.asked: list[tuple[str, int]] = []
        self.tags: list[dict] = []

    def ask_many(self, prompts, *, repeat=0, tags=None):
        answers = []
        tags = tags if isinstance(tags, list) else [tags] * len(prompts)
        assert len(tags) == len(prompts)
        self.tags += tags
        for prompt in prompts:
            self.asked.append((prompt, repeat))
            if self.fail_on and prompt == self.fail_on:
                answers.append(HostAnswer(text=None, error="HTTP 500 after 3 attempts"))
            elif prompt == QUESTION:
                answers.append(HostAnswer(REPEATS[repeat] if self.varies and repeat else ORIGINAL))
            else:
                answers.append(HostAnswer(PERTURBED))
        return answers


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return str(bert_encoder_folder(tmp_path_factory.mktemp("tiny-bert")))


def _evaluator(bert, hosts, **params):
    ctx = make_context(hosts=HostPool(hosts) if hosts is not None else None, device="cpu",
                       plugins=PluginManager(autoload=False))
    params = {"bertscore_model": bert, "num_perturbations": 2, "num_baseline_samples": 3, **params}
    return GSR(GSR.validate_params(params), ctx)


def _independent_vectors(folder: str, text: str) -> np.ndarray:
    """Token vectors of one text, straight from transformers (no padding, no batching), L2-normalised."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = BertModel.from_pretrained(folder).eval()
    with torch.no_grad():
        states = model(**tokenizer(text.strip(), return_tensors="pt")).last_hidden_state[0].double().numpy()
    return states / np.linalg.norm(states, axis=1, keepdims=True)


def _independent_f1(folder: str, reference: str, candidate: str) -> float:
    ref, cand = _independent_vectors(folder, reference), _independent_vectors(folder, candidate)
    # Greedy matching by hand; [CLS] and [SEP] (first and last token) can be matched but are not averaged.
    precision = sum(max(float(c @ r) for r in ref) for c in cand[1:-1]) / (len(cand) - 2)
    recall = sum(max(float(r @ c) for c in cand) for r in ref[1:-1]) / (len(ref) - 2)
    return 2 * precision * recall / (precision + recall)


# -- WER -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("references, hypotheses", [
    (["the cat sat on the mat"], ["the cat sat on mat"]),
    (["the cat sat on the mat"], ["a cat sat on the the mat today"]),
    (["paris is the capital of france"] * 2, ["berlin is the capital of germany", "paris"]),
    (["one  two\tthree", " four five "], ["one two three", "four  six"]),
    (["a\nb c"], ["a b c"]),
    (["same words here"], ["same words here"]),
    ([""], ["some words"]),
    ([""], [""]),
    (["x y", ""], ["", "z"]),
])
def test_word_error_rate_equals_jiwer(references, hypotheses):
    assert word_error_rate(references, hypotheses) == pytest.approx(
        jiwer.wer(reference=references, hypothesis=hypotheses), abs=1e-12)


def test_word_error_rate_by_hand():
    # 2 substitutions in 6 words, then 5 deletions in 6 words: 7 edits over 12 reference words.
    assert word_error_rate(["paris is the capital of france"] * 2,
                           ["berlin is the capital of germany", "paris"]) == pytest.approx(7 / 12)


# -- BERTScore -----------------------------------------------------------------------------------

PAIRS = [("the cat sat on the mat.", "the cat sat on a mat."),
         ("paris is the capital of france.", "the capital of france is paris."),
         ("stock prices fell sharply on monday.", "good")]


def test_bertscore_equals_an_independent_computation(bert):
    from sonar_plugins.robustness.loaders import load_token_encoder

    model, tokenizer = load_token_encoder(ModelStore(), bert)
    texts = [t for pair in PAIRS for t in pair]
    vectors = encode_tokens(model, tokenizer, texts)
    for k, (reference, candidate) in enumerate(PAIRS):
        _, _, f1 = bertscore(vectors[2 * k], vectors[2 * k + 1])
        assert f1 == pytest.approx(_independent_f1(bert, reference, candidate), abs=1e-5)
    same = bertscore(vectors[0], vectors[0])
    assert same == pytest.approx((1.0, 1.0, 1.0))


def test_bertscore_equals_the_bert_score_package(bert):
    bert_score = pytest.importorskip("bert_score")
    from sonar_plugins.robustness.loaders import load_token_encoder

    model, tokenizer = load_token_encoder(ModelStore(), bert)
    refs, cands = [r for r, _ in PAIRS], [c for _, c in PAIRS]
    P, R, F = bert_score.score(cands, refs, model_type=bert, num_layers=2, idf=False, batch_size=4)
    vectors = encode_tokens(model, tokenizer, refs + cands)
    for k in range(len(PAIRS)):
        assert bertscore(vectors[k], vectors[len(PAIRS) + k]) == pytest.approx(
            (float(P[k]), float(R[k]), float(F[k])), abs=1e-5)


def test_bertscore_of_an_empty_text_is_zero(bert):
    from sonar_plugins.robustness.loaders import load_token_encoder

    model, tokenizer = load_token_encoder(ModelStore(), bert)
    empty, text = encode_tokens(model, tokenizer, ["", "the cat sat."])
    assert bertscore(empty, text) == (0.0, 0.0, 0.0)


# -- the evaluator -------------------------------------------------------------------------------

def test_declared_deterministic_host_has_no_baseline(bert):
    host = ScriptedHost("lookup", deterministic=True)
    [result] = _evaluator(bert, [host]).evaluate([make_row(test_case_key="q1", model_key="lookup", input=QUESTION)])
    prompts = perturb_many(QUESTION, "butter_finger", derive_seed(5, "q1", "butter_finger"), 2)
    assert host.asked == [(QUESTION, 0), (prompts[0], 0), (prompts[1], 0)]  # never repeat > 0
    assert [t["purpose"] for t in host.tags] == ["original", "perturbed", "perturbed"]
    assert {(t["evaluator"], t["test_case_key"]) for t in host.tags} == {("general_semantic_robustness", "q1")}
    assert result.details["perturbed_prompts"] == prompts
    assert result.details["deterministic"] is True
    assert result.details["determinism_check"] == "declared by its host"
    assert "word_error_rate_baseline" not in result.details
    # Both perturbed answers: 2 substitutions in 6 words each.
    assert result.values["word_error_rate"] == pytest.approx(jiwer.wer(reference=[ORIGINAL] * 2,
                                                                       hypothesis=[PERTURBED] * 2))
    assert result.values["word_error_rate"] == pytest.approx(1 / 3)
    f1 = _independent_f1(bert, ORIGINAL, PERTURBED)
    assert result.values["bertscore_dissimilarity"] == pytest.approx(1 - f1, abs=1e-5)
    assert result.values["bertscore_dissimilarity"] > 0


def test_determinism_check_of_an_undeclared_host_that_repeats_itself(bert):
    host = ScriptedHost("echo")
    rows = [make_row(test_case_key=f"q{i}", model_key="echo", input=QUESTION) for i in range(7)]
    results = list(_evaluator(bert, [host]).evaluate(rows))
    repeats = sorted({r for _, r in host.asked})
    # The first 5 questions asked again (repeat 1), the same answers came back: no baseline samples.
    assert repeats == [0, 1]
    assert sum(1 for _, r in host.asked if r == 1) == 5
    assert all(r.details["deterministic"] is True for r in results)
    assert results[0].details["determinism_check"] == "5 prompt(s) asked twice: the same answers"
    for row, result in zip(rows, results):
        # A perturbed prompt may come out unchanged (a key drawn for itself): the host then answers ORIGINAL.
        answers = [ORIGINAL if p == QUESTION else PERTURBED for p in result.details["perturbed_prompts"]]
        assert result.values["word_error_rate"] == pytest.approx(jiwer.wer(reference=[ORIGINAL] * 2,
                                                                           hypothesis=answers))
    # q3's first butter_finger copy (seed from "q3") changed no letter: 2 edits over 12 words instead of 4.
    assert [round(r.values["word_error_rate"], 6) for r in results] == [round(1 / 3, 6)] * 3 + [round(1 / 6, 6)] \
        + [round(1 / 3, 6)] * 3


def test_baseline_of_a_host_that_answers_differently_every_time(bert):
    host = ScriptedHost("sampler", varies=True)
    [result] = _evaluator(bert, [host]).evaluate([make_row(test_case_key="q1", model_key="sampler", input=QUESTION)])
    assert sorted({r for p, r in host.asked if p == QUESTION}) == [0, 1, 2]
    assert sum(1 for p, r in host.asked if p == QUESTION and r == 1) == 1  # the check's answer is a baseline sample
    assert [(t["purpose"], r) for t, (_, r) in zip(host.tags, host.asked)] == [
        ("original", 0), ("perturbed", 0), ("perturbed", 0), ("determinism", 1), ("baseline", 2)]
    details = result.details
    assert details["deterministic"] is False
    assert details["determinism_check"] == "1 prompt(s) asked twice: different answers"
    assert details["baseline_answers"] == [REPEATS[1], REPEATS[2]]
    # fmeval's pairs: (r1, r2), (r1, original), (r2, original); WER(prediction = first, reference = second).
    samples = [REPEATS[1], REPEATS[2], ORIGINAL]
    pairs = list(combinations(samples, 2))
    base_wer = jiwer.wer(reference=[b for _, b in pairs], hypothesis=[a for a, _ in pairs])
    assert base_wer == pytest.approx(4 / 18)  # 2 + 1 + 1 word edits over 3 x 6 reference words
    assert details["word_error_rate_baseline"] == pytest.approx(base_wer)
    assert details["word_error_rate_raw"] == pytest.approx(1 / 3)
    assert result.values["word_error_rate"] == pytest.approx(1 / 3 - 4 / 18)  # max(0, d - d_base) = 1/9
    base_dis = 1 - sum(_independent_f1(bert, a, b) for a, b in pairs) / 3
    raw_dis = 1 - _independent_f1(bert, ORIGINAL, PERTURBED)
    assert base_dis > 0
    assert details["bertscore_dissimilarity_baseline"] == pytest.approx(base_dis, abs=1e-5)
    assert details["bertscore_dissimilarity_raw"] == pytest.approx(raw_dis, abs=1e-5)
    assert result.values["bertscore_dissimilarity"] == pytest.approx(max(0.0, raw_dis - base_dis), abs=1e-5)


def test_baseline_is_floored_at_zero(bert):
    # Perturbed answers identical to the original: d = 0 < d_base, so the score is max(0, d - d_base) = 0.
    class Stable(ScriptedHost):
        def ask_many(self, prompts, *, repeat=0, tags=None):
            return [HostAnswer(REPEATS[repeat] if repeat else ORIGINAL) for _ in prompts]

    [result] = _evaluator(bert, [Stable("s")]).evaluate([make_row(test_case_key="q1", model_key="s", input=QUESTION)])
    assert result.details["word_error_rate_raw"] == 0.0
    assert result.details["word_error_rate_baseline"] > 0
    assert result.values == {"word_error_rate": 0.0, "bertscore_dissimilarity": 0.0}


def test_rows_without_a_host_copies_and_failed_answers(bert):
    failing = ScriptedHost("flaky", deterministic=True, fail_on=QUESTION)
    rows = [make_row(test_case_key="q1", model_key="ghost", input=QUESTION),
            make_row(test_case_key="q1~butter_finger", model_key="flaky", input="Whst is it?",
                     original_test_case_key="q1", perturbation="butter_finger"),
            make_row(test_case_key="q1", model_key="flaky", input=QUESTION)]
    ghost, copy, failed = _evaluator(bert, [failing]).evaluate(rows)
    assert ghost.values == {"bertscore_dissimilarity": None, "word_error_rate": None}
    assert ghost.error_message == "no model host 'ghost' in the run: the model cannot be asked perturbed prompts"
    assert copy.values == {"bertscore_dissimilarity": None, "word_error_rate": None}
    assert copy.details == {"not_scored": "a perturbed copy of test case q1: this evaluator perturbs the original "
                                          "test case itself"}
    assert failed.error_message == "host 'flaky' gave no answer to original prompt: HTTP 500 after 3 attempts"


def test_fmeval_parameters_reach_the_perturbator(bert):
    host = ScriptedHost("lookup", deterministic=True)
    evaluator = _evaluator(bert, [host], perturbation_type="whitespace_add_remove", whitespace_add_prob=1.0,
                           whitespace_remove_prob=0.0, num_perturbations=1)
    [result] = evaluator.evaluate([make_row(test_case_key="q1", model_key="lookup", input="ab c")])
    assert result.details["perturbed_prompts"] == ["a b  c "]


def test_unknown_perturbation_type_is_a_parameter_error():
    """Checked against the run's plugin manager (whose ``-p`` modules may add perturbators)."""
    from sonar_core.contract import ParameterError

    params = GSR.validate_params({"perturbation_type": "typo"})
    with pytest.raises(ParameterError, match=r"^parameter 'perturbation_type' of evaluator "
                                             r"'general_semantic_robustness': unknown perturbator 'typo' \(known: "):
        GSR.check_with_plugins(params, PluginManager(autoload=False))
    GSR.check_with_plugins(GSR.validate_params({"perturbation_type": "random_uppercase"}),
                           PluginManager(autoload=False))


def test_default_bertscore_model_is_the_embedded_minilm():
    assert GSR.validate_params({})["bertscore_model"] == "all-MiniLM-L6-v2"
    assert GSR.model_params == {"bertscore_model": "token_encoder"}
    assert math.isinf(GSR.metric("word_error_rate").value_range[1])
