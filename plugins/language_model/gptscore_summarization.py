"""Summarization without reference (GPTScore): the summary after the text it summarises."""

from __future__ import annotations

from typing import ClassVar

from sonar_core import Input, Metric, Row

from .gptscore import GptScoreEvaluator, anll_metric

__all__ = ["GptScoreSummarizationEvaluator"]


class GptScoreSummarizationEvaluator(GptScoreEvaluator):
    """Seven GPTScore aspects of a summary (actual answer) of the question's text."""

    id = "gptscore_summarization_without_reference"
    display_name: ClassVar[str] = "Summarization without reference (GPTScore)"
    tagline: ClassVar[str] = "How likely a local LM finds the summary after the text it summarises."
    description: ClassVar[str] = (
        "GPTScore without a reference: for each aspect a language model reads `<instruction>: <question>`, a line "
        "`Tl;dr` and then the actual answer; the score is the average negative log-likelihood (ANLL) of the "
        "answer's tokens after `Tl;dr`. The question is the text to summarise. Lower is better. The model is the "
        "embedded SmolLM2-135M-Instruct unless `gpt_score_model` names another "
        "of the catalogue's models (a flan-t5 model reads the "
        "prompt in its encoder and its decoder scores the text)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.ACTUAL_ANSWER)
    category: ClassVar[str] = "Summarization"
    templates: ClassVar[dict[str, str]] = {
        "semantic_coverage": "Generate a summary with as much semantic coverage as possible for the following text:",
        "factuality": "Generate a summary with consistent facts for the following text:",
        "consistency": "Generate factually consistent summary for the following text:",
        "informativeness": "Generate an informative summary that captures the key points of the following text:",
        "coherence": "Generate a coherent summary for the following text:",
        "relevance": "Generate a relevant summary with consistent details for the following text:",
        "fluency": "Generate a fluent and grammatical summary for the following text:",
    }
    metrics: ClassVar[tuple[Metric, ...]] = (
        anll_metric("semantic_coverage", "Semantic Coverage",
                    "How many semantic content units of the text does the summary cover?", primary=True),
        anll_metric("factuality", "Factuality", "Does the summary keep the facts of the text?"),
        anll_metric("consistency", "Consistency", "Is the summary consistent in the information it gives?"),
        anll_metric("informativeness", "Informativeness", "How well does the summary capture the key ideas?"),
        anll_metric("coherence", "Coherence", "How much does the summary make sense?"),
        anll_metric("relevance", "Relevance", "How relevant is the summary to the text?"),
        anll_metric("fluency", "Fluency", "Is the summary well written and grammatical?"),
    )

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        return [(f"{instruction} {row.input.strip()}\nTl;dr\n", row.actual_output.strip())]
