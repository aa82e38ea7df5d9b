"""Summarization (judge): is the summary comprehensive, concise, coherent and independent?"""

from __future__ import annotations

from sonar_core import Difference, Input, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

# The catalogue's prompt, word for word (its "it's" included): the summary and the original document.
PROMPT = """\
You are comparing the summary text and it's original document and trying to determine if the \
summary is good. Here is the data:
[BEGIN DATA]
************
[Summary]: {{ACTUAL_ANSWER}}
************
[Original Document]: {{QUESTION}}
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
    tagline = "An LLM judge rates each summary good or bad against its original document."
    description = (
        "The question is the document to summarize and the actual answer is the model's summary. The LLM "
        "judge is asked the catalogue's prompt: it compares the summary with the original document and answers "
        "`good` (comprehensive, concise, coherent and independent: the row passes) or `bad` (it fails); any "
        "other answer is a parse failure, kept in the row's `judge_answers`. The expected answer is not used."
    )
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER)
    differences = (
        Difference(
            "inputs: the catalogue's table lists the expected answer (a reference summary) and the actual answer; "
            "its prompt reads the actual answer and the question (the original document), never the expected "
            "answer. Sonar requires what the prompt reads: the question and the actual answer",
            "a prompt with no original document cannot be judged, and a reference summary the prompt never shows "
            "cannot change the verdict",
            "put the document to summarize in the question; no expected answer is needed",
            field="inputs",
        ),
    )
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

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"good": True, "bad": False},
                            {"bad": "the summary is not comprehensive, concise, coherent and independent",
                             "good": "good summary"})
