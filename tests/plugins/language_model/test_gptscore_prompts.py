"""Every one of GPTScore's 24 aspect prompts, pinned by its text as H2O's evaluator catalogue gives it.

The lines below are the catalogue's own (shared/reference/004_evaluators_reflowed.txt, the "Instructions
used by the evaluator" of the four GPTScore evaluators), copied verbatim; `` | `` there is a line break,
double backticks mark a slot. Each is turned into the text the language model reads and the text it
scores, and each aspect's value must be the ANLL of exactly that, computed here on a tiny GPT-2.
"""

from __future__ import annotations

import re

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from sonar_core.testing import make_row, score_rows
from sonar_plugins.language_model.gptscore_question_answering import GptScoreQuestionAnsweringEvaluator
from sonar_plugins.language_model.gptscore_summarization import GptScoreSummarizationEvaluator
from sonar_plugins.language_model.gptscore_summarization_reference import GptScoreSummarizationReferenceEvaluator
from sonar_plugins.language_model.gptscore_translation import GptScoreTranslationEvaluator
from tiny_models import causal_lm_folder

# Summarization with reference (GPTScore), catalogue lines 3227-3232.
WITH_REFERENCE = """
- Semantic coverage: | Rewrite the following text with the same semantics. ``{ref_hypo}`` In other words, ``{hypo_ref}``
- Factuality: | Rewrite the following text with consistent facts. ``{ref_hypo}`` In other words, ``{hypo_ref}``
- Informativeness: | Rewrite the following text with its core information. ``{ref_hypo}`` In other words, ``{hypo_ref}``
- Coherence: | Rewrite the following text into a coherent text. ``{ref_hypo}`` In other words, ``{hypo_ref}``
- Relevance: | Rewrite the following text with consistent details. ``{ref_hypo}`` In other words, ``{hypo_ref}``
- Fluency: | Rewrite the following text into a fluent and grammatical text. ``{ref_hypo}`` In other words, ``{hypo_ref}``
"""
# Summarization without reference (GPTScore), lines 3333-3339.
WITHOUT_REFERENCE = """
- Semantic coverage: | Generate a summary with as much semantic coverage as possible for the following text: {src} | Tl;dr | {target}
- Factuality: | Generate a summary with consistent facts for the following text: {src} | Tl;dr | {target}
- Consistency: | Generate factually consistent summary for the following text: {src} | Tl;dr | {target}
- Informativeness: | Generate an informative summary that captures the key points of the following text: {src} | Tl;dr | {target}
- Coherence: | Generate a coherent summary for the following text: {src} | Tl;dr | {target}
- Relevance: | Generate a relevant summary with consistent details for the following text: {src} | Tl;dr | {target}
- Fluency: | Generate a fluent and grammatical summary for the following text: {src} | Tl;dr | {target}
"""
# Machine Translation (GPTScore), lines 3627-3629.
TRANSLATION = """
- Accuracy: | Rewrite the following text with its core information and consistent facts: {ref_hypo} In other words, {hypo_ref}
- Fluency: | Rewrite the following text to make it more grammatical and well-written: {ref_hypo} In other words, {hypo_ref}
- Multidimensional quality metrics: | Rewrite the following text into high-quality text with its core information: {ref_hypo} In other words, {hypo_ref}
"""
# Question Answering (GPTScore), lines 3715-3722; {history} is "human: {input} | AI: {actual_output}".
QUESTION_ANSWERING = """
- Interest: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI interesting? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Engagement: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI engaging? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Understandability: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI understandable? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Relevance: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI relevant to the conversation? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Specific: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI generic or specific to the conversation? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Correctness: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI correct to conversations? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Semantically appropriate: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI semantically appropriate? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
- Fluency: | Answer the question based on the conversation between a human and AI. | Question: Are the responses of AI fluently written? (a) Yes. (b) No. | Conversation: {history} | Answer: Yes
"""

REFERENCE = "The storm caused damage to many homes in the state."
ANSWER = "The cat sat on the mat."
QUESTION = "Customers can file a claim online or by phone."


def aspects(block: str) -> dict[str, str]:
    """metric key -> the catalogue's template (the text after ``- Name: | ``)."""
    out = {}
    for line in block.strip().splitlines():
        name, template = re.fullmatch(r"- ([^:]+): \| (.*)", line).groups()
        out[name.lower().replace(" ", "_")] = template.replace("``", "")
    return out


def rewrite_pairs(template: str, reference: str, answer: str) -> list[tuple[str, str]]:
    """(prompt, scored text) both ways: ``{ref_hypo}`` the reference and ``{hypo_ref}`` the answer, then reversed;
    the model scores what follows "In other words,"."""
    prompt, slot = template.split(" In other words, ")
    assert slot == "{hypo_ref}"
    return [(prompt.replace("{ref_hypo}", first) + " In other words,", " " + second)
            for first, second in ((reference, answer), (answer, reference))]


def tldr_pair(template: str, source: str, summary: str) -> tuple[str, str]:
    *lines, target = template.split(" | ")
    assert target == "{target}"
    return "\n".join(lines).replace("{src}", source) + "\n", summary


def yes_pair(template: str, question: str, answer: str) -> tuple[str, str]:
    *lines, target = template.split(" | ")
    history = f"human: {question}\nAI: {answer}"
    return "\n".join(lines).replace("{history}", history) + "\n", target


@pytest.fixture(scope="module")
def lm_folder(tmp_path_factory):
    return causal_lm_folder(tmp_path_factory.mktemp("gpt2"), "gpt2")


@pytest.fixture(scope="module")
def anll(lm_folder):
    """ANLL of ``target`` after ``prefix``: one full forward pass, the model's own logits."""
    model = AutoModelForCausalLM.from_pretrained(str(lm_folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(lm_folder))

    def compute(prefix: str, target: str) -> float:
        p = tokenizer(prefix, add_special_tokens=False)["input_ids"]
        t = tokenizer(target, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(torch.tensor([p + t])).logits[0].double(), dim=-1)
        return sum(-log_probs[len(p) + i - 1, token].item() for i, token in enumerate(t)) / len(t)

    return compute


def test_the_catalogue_has_24_aspects_and_each_evaluator_all_of_its_own():
    expected = {GptScoreSummarizationReferenceEvaluator: WITH_REFERENCE, GptScoreSummarizationEvaluator: WITHOUT_REFERENCE,
                GptScoreTranslationEvaluator: TRANSLATION, GptScoreQuestionAnsweringEvaluator: QUESTION_ANSWERING}
    assert sum(len(aspects(block)) for block in expected.values()) == 24
    for cls, block in expected.items():
        assert [m.key for m in cls.metrics] == list(aspects(block)), cls.id


def test_summarization_with_reference_prompts(lm_folder, anll):
    [result] = score_rows(GptScoreSummarizationReferenceEvaluator,
                          [make_row(test_case_key="t", model_key="m", expected_output=REFERENCE, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    for key, template in aspects(WITH_REFERENCE).items():
        both = [anll(prompt, text) for prompt, text in rewrite_pairs(template, REFERENCE, ANSWER)]
        assert result.values[key] == pytest.approx(sum(both) / 2, rel=1e-6), key


def test_machine_translation_prompts(lm_folder, anll):
    [result] = score_rows(GptScoreTranslationEvaluator,
                          [make_row(test_case_key="t", model_key="m", expected_output=REFERENCE, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    for key, template in aspects(TRANSLATION).items():
        both = [anll(prompt, text) for prompt, text in rewrite_pairs(template, REFERENCE, ANSWER)]
        assert result.values[key] == pytest.approx(sum(both) / 2, rel=1e-6), key


def test_summarization_without_reference_prompts(lm_folder, anll):
    [result] = score_rows(GptScoreSummarizationEvaluator,
                          [make_row(test_case_key="t", model_key="m", input=QUESTION, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    for key, template in aspects(WITHOUT_REFERENCE).items():
        assert result.values[key] == pytest.approx(anll(*tldr_pair(template, QUESTION, ANSWER)), rel=1e-6), key


def test_question_answering_prompts(lm_folder, anll):
    [result] = score_rows(GptScoreQuestionAnsweringEvaluator,
                          [make_row(test_case_key="t", model_key="m", input=QUESTION, actual_output=ANSWER)],
                          gpt_score_model=str(lm_folder))
    for key, template in aspects(QUESTION_ANSWERING).items():
        assert result.values[key] == pytest.approx(anll(*yes_pair(template, QUESTION, ANSWER)), rel=1e-6), key
