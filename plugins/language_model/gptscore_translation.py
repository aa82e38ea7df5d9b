"""Machine Translation (GPTScore): the translation and the reference translation rewrite each other."""

from __future__ import annotations

from typing import ClassVar

from sonar_core import Input, Metric, Row

from .gptscore import GptScoreEvaluator, anll_metric, rewrite_pairs

__all__ = ["GptScoreTranslationEvaluator"]


class GptScoreTranslationEvaluator(GptScoreEvaluator):
    """Three GPTScore aspects of a translation against the expected one, both directions averaged."""

    id = "gptscore_machine_translation"
    display_name: ClassVar[str] = "Machine Translation (GPTScore)"
    tagline: ClassVar[str] = "How likely a local LM finds the translation as a rewrite of the reference, and back."
    description: ClassVar[str] = (
        "GPTScore for translations: for each aspect a language model reads `<instruction>: <expected answer> In other "
        "words,` and the score is the average negative log-likelihood (ANLL) of the actual answer's tokens that "
        "follow; then the roles swap and the two ANLLs are averaged. Lower is better. The model is the "
        "embedded SmolLM2-135M-Instruct unless `gpt_score_model` names another "
        "of the catalogue's models (a flan-t5 model reads the "
        "prompt in its encoder and its decoder scores the text)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    templates: ClassVar[dict[str, str]] = {
        "accuracy": "Rewrite the following text with its core information and consistent facts:",
        "fluency": "Rewrite the following text to make it more grammatical and well-written:",
        "multidimensional_quality_metrics": "Rewrite the following text into high-quality text with its core "
                                            "information:",
    }
    metrics: ClassVar[tuple[Metric, ...]] = (
        anll_metric("accuracy", "Accuracy",
                    "Are there inaccuracies, missing or unfactual content in the actual answer?", primary=True),
        anll_metric("fluency", "Fluency", "Is the actual answer well written and grammatical?"),
        anll_metric("multidimensional_quality_metrics", "Multidimensional Quality Metrics",
                    "How is the overall quality of the actual answer?"),
    )

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        return rewrite_pairs(instruction, row.expected_output, row.actual_output)
