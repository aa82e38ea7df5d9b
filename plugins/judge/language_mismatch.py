"""Language Mismatch (judge): is the answer in the language of the question?"""

from __future__ import annotations

from sonar_core import Input, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

PROMPT = """\
You are examining the language of written text content. Here is the text:
[BEGIN DATA]
************
[QUESTION]: {{QUESTION}}
[ANSWER]: {{ACTUAL_ANSWER}}
************
[END DATA]

Guess the language of the QUESTION and the language of the ANSWER. If the language of the QUESTION \
and the ANSWER is the same, respond using only "same". If the language of the QUESTION and the \
language of the ANSWER are different respond only using the word "different". Your response should \
be only one word without any explanation. Your task is only to consider the language not the \
semantics of the text. Different dialects of the same language as well as different tones within \
the same language are considered as the same language."""


class LanguageMismatchEvaluator(JudgeEvaluator):
    """Pass when the judge answers "same"; "different" fails the row."""

    id = "language_mismatch"
    display_name = "Language Mismatch (Judge)"
    tagline = "An LLM judge checks that each answer is in the language of its question."
    description = (
        "Asks the LLM judge whether the question and the actual answer are written in the same language "
        "(dialects and tones of one language count as the same). The judge answers `same` (the row passes) "
        "or `different` (it fails); any other answer is a parse failure, kept in the row's `judge_answers`."
    )
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER)
    prompt_template = PROMPT
    labels = ("same", "different")
    calibration_labels = {True: "same", False: "different"}
    metrics = judge_metrics(
        passes=("same_language", "Same language (pass)"),
        fails=("language_mismatch", "Language mismatch (fail)"),
        retrieval=("language_mismatch_retrieval_failures", "Language mismatch retrieval failures"),
        generation=("language_mismatch_generation_failures", "Language mismatch generation failures"),
        parse=("language_mismatch_parsing_failures", "Language mismatch parsing failures"),
        what="as answered in the question's language",
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"same": True, "different": False},
                            {"different": "the answer is not in the question's language", "same": "same language"})
