"""Summarization (judge): is the summary comprehensive, concise, coherent and independent?"""

from __future__ import annotations

from sonar_core import Difference, Input
from sonar_core.judging import JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

# The catalogue's prompt, plus the reference summary its method compares with.
PROMPT = """\
You are comparing the summary text and it's original document and trying to determine if the \
summary is good. Here is the data:
[BEGIN DATA]
************
[Summary]: {{ACTUAL_ANSWER}}
************
[Original Document]: {{QUESTION}}
************
[Reference Summary]: {{EXPECTED_ANSWER}}
[END DATA]

Compare the Summary above to the Original Document and determine if the Summary is comprehensive, \
concise, coherent, and independent relative to the Original Document. Your response must be a single \
word, either "good" or "bad", and should not contain any text or characters aside from that. "bad" \
means that the Summary is not comprehensive, concise, coherent, and independent relative to the \
Original Document. "good" means the Summary is comprehensive, concise, coherent, and independent \
relative to the Original Document."""


class SummarizationJudgeEvaluator(JudgeEvaluator):
    """Pass when the judge answers "good"; "bad" fails the row."""

    id = "summarization_judge"
    display_name = "Summarization (Judge)"
    tagline = "An LLM judge rates each summary good or bad against its document and a reference summary."
    description = (
        "The question is the document to summarize and the actual answer is the model's summary. The LLM "
        "judge compares the summary with the document, with the expected answer as a reference summary, "
        "and answers `good` (comprehensive, concise, coherent and independent: the row passes) or `bad` "
        "(it fails); any other answer is a parse failure, kept in the row's `judge_answers`. The "
        "catalogue's prompt is used with one addition: the reference summary its method compares with."
    )
    required_inputs = (Input.QUESTION, Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    prompt_template = PROMPT
    labels = ("good", "bad")
    calibration_labels = {True: "good", False: "bad"}
    category = "Summarization"
    metrics = judge_metrics(
        passes=("good_summary", "Good summary (pass)"),
        fails=("bad_summary", "Bad summary (fail)"),
        retrieval=("summarization_retrieval_failures", "Summarization retrieval failures"),
        generation=("summarization_generation_failures", "Summarization generation failures"),
        parse=("summarization_parsing_failures", "Summarization parsing failures"),
        what="as good summaries",
    )
    differences = (
        Difference(
            what="inputs: the catalogue's section requires the expected answer and the actual answer (its overview "
                 "table and prompt also use the question); Sonar requires the question too (the text summarised)",
            why="Sonar's prompt shows the judge the original document (the question) beside the summaries",
            action="rows without a question are skipped here and scored by H2O Sonar",
            field="inputs",
        ),
        Difference(
            what="prompt: Sonar adds the expected answer (a reference summary) to the catalogue's prompt",
            why="the catalogue's method compares with a reference summary that its prompt does not show the judge",
            action="verdicts can differ from H2O Sonar's for the same rows",
            field="formula",
        ),
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"good": True, "bad": False},
                            {"bad": "the summary is not comprehensive, concise, coherent and independent",
                             "good": "good summary"})
