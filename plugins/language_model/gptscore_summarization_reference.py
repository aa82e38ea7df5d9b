"""Summarization with reference (GPTScore): the summary and the reference summary rewrite each other."""

from __future__ import annotations

from typing import ClassVar

from sonar_core import Input, Metric, Row

from .gptscore import GptScoreEvaluator, anll_metric, rewrite_pairs

__all__ = ["GptScoreSummarizationReferenceEvaluator"]


class GptScoreSummarizationReferenceEvaluator(GptScoreEvaluator):
    """Six GPTScore aspects of the actual answer against the expected answer, both directions averaged."""

    id = "gptscore_summarization_with_reference"
    display_name: ClassVar[str] = "Summarization with reference (GPTScore)"
    tagline: ClassVar[str] = "How likely a local LM finds the summary as a rewrite of the reference, and back."
    description: ClassVar[str] = (
        "GPTScore with a reference: for each aspect a language model reads `<instruction> <expected answer> In other "
        "words,` and the score is the average negative log-likelihood (ANLL) of the actual answer's tokens that "
        "follow; then the roles swap (the expected answer after the actual answer) and the two ANLLs are "
        "averaged. Lower is better. The model is the embedded SmolLM2-135M-Instruct unless `gpt_score_model` "
        "names another of the catalogue's models (a flan-t5 model reads the "
        "prompt in its encoder and its decoder scores the text)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    category: ClassVar[str] = "Summarization"
    templates: ClassVar[dict[str, str]] = {
        "semantic_coverage": "Rewrite the following text with the same semantics.",
        "factuality": "Rewrite the following text with consistent facts.",
        "informativeness": "Rewrite the following text with its core information.",
        "coherence": "Rewrite the following text into a coherent text.",
        "relevance": "Rewrite the following text with consistent details.",
        "fluency": "Rewrite the following text into a fluent and grammatical text.",
    }
    metrics: ClassVar[tuple[Metric, ...]] = (
        anll_metric("semantic_coverage", "Semantic Coverage",
                    "How many semantic content units of the reference does the actual answer cover?", primary=True),
        anll_metric("factuality", "Factuality", "Does the actual answer keep the facts of the reference?"),
        anll_metric("informativeness", "Informativeness", "How well does the actual answer capture the key ideas?"),
        anll_metric("coherence", "Coherence", "How much does the actual answer make sense?"),
        anll_metric("relevance", "Relevance", "How relevant is the actual answer to the reference?"),
        anll_metric("fluency", "Fluency", "Is the actual answer well written and grammatical?"),
    )

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        return rewrite_pairs(instruction, row.expected_output, row.actual_output)
