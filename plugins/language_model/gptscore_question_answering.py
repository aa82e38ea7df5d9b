"""Question Answering (GPTScore): how likely 'Answer: Yes' is after questions about the conversation."""

from __future__ import annotations

from typing import ClassVar

from sonar_core import Input, Metric, Row

from .gptscore import GptScoreEvaluator, anll_metric

__all__ = ["GptScoreQuestionAnsweringEvaluator"]

_ASK = ("Answer the question based on the conversation between a human and AI.\n"
        "Question: Are the responses of AI {quality}? (a) Yes. (b) No.\n")


class GptScoreQuestionAnsweringEvaluator(GptScoreEvaluator):
    """Eight GPTScore aspects of an answer: the ANLL of ``Answer: Yes`` after a yes/no question about it."""

    id = "gptscore_question_answering"
    display_name: ClassVar[str] = "Question Answering (GPTScore)"
    tagline: ClassVar[str] = "How likely a local LM finds 'Answer: Yes' to questions about the answer's quality."
    description: ClassVar[str] = (
        "GPTScore for dialogue: for each aspect a language model reads a yes/no question about the conversation "
        "(`human: <question>`, `AI: <actual answer>`) and the score is the average negative log-likelihood "
        "(ANLL) of the tokens `Answer: Yes` that follow. Lower is better (the model is more ready to say yes). "
        "The model is the embedded SmolLM2-135M-Instruct unless `gpt_score_model` names another "
        "of the catalogue's models (a flan-t5 model reads the "
        "prompt in its encoder and its decoder scores the text)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.ACTUAL_ANSWER)
    templates: ClassVar[dict[str, str]] = {
        "interest": _ASK.format(quality="interesting"),
        "engagement": _ASK.format(quality="engaging"),
        "understandability": _ASK.format(quality="understandable"),
        "relevance": _ASK.format(quality="relevant to the conversation"),
        "specific": _ASK.format(quality="generic or specific to the conversation"),
        "correctness": _ASK.format(quality="correct to conversations"),
        "semantically_appropriate": _ASK.format(quality="semantically appropriate"),
        "fluency": _ASK.format(quality="fluently written"),
    }
    metrics: ClassVar[tuple[Metric, ...]] = (
        anll_metric("interest", "Interest", "Is the actual answer interesting?", primary=True),
        anll_metric("engagement", "Engagement", "Is the actual answer engaging?"),
        anll_metric("understandability", "Understandability", "Is the actual answer understandable?"),
        anll_metric("relevance", "Relevance", "How relevant is the actual answer to the question?"),
        anll_metric("specific", "Specific", "Is the actual answer specific to the question rather than generic?"),
        anll_metric("correctness", "Correctness", "Is the actual answer correct, without misunderstanding?"),
        anll_metric("semantically_appropriate", "Semantically Appropriate",
                    "Is the actual answer semantically appropriate?"),
        anll_metric("fluency", "Fluency", "Is the actual answer well written and grammatical?"),
    )

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        conversation = f"Conversation: human: {row.input.strip()}\nAI: {row.actual_output.strip()}\n"
        return [(instruction + conversation, "Answer: Yes")]
