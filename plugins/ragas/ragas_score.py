"""RAGAS: the harmonic mean of faithfulness, answer relevancy, context precision and context recall."""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Difference, Input, Metric, Param, Row, RowResult

from .answer_relevancy import generated_questions
from .base import ALL_INPUTS, EMBEDDING_MODEL, JUDGE_KEY, RAGAS_NOTE, RagasEvaluator, Scored, parse_failure_metric
from .context_precision import chunk_verdicts
from .context_recall import sentence_attributions
from .faithfulness import claim_details

__all__ = ["RagasEvaluator", "RagasScoreEvaluator", "harmonic_mean"]

COMPONENTS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
NAMES = {"faithfulness": "faithfulness", "answer_relevancy": "answer relevancy",
         "context_precision": "context precision", "context_recall": "context recall"}


def harmonic_mean(values: list[float]) -> float:
    """n / sum(1 / v); 0 when any value is 0 or below (the limit as a value goes to 0; a negative
    answer relevancy, possible with cosines, counts as 0)."""
    if any(v <= 0 for v in values):
        return 0.0
    return len(values) / sum(1.0 / v for v in values)


class RagasScoreEvaluator(RagasEvaluator):
    """``ragas`` per row: Sonar's harmonic mean of ragas's four per-row scores."""

    id = "ragas"
    display_name: ClassVar[str] = "RAGAS"
    tagline: ClassVar[str] = ("RAGAS: one score for retrieval and generation, the harmonic mean of faithfulness, "
                               "answer relevancy, context precision and context recall.")
    description: ClassVar[str] = (
        "Runs ragas's Faithfulness, AnswerRelevancy, LLMContextPrecisionWithReference and LLMContextRecall on each "
        "row (the four evaluators of those names run the same metrics: when they ran earlier in the run with the same "
        "judge, their results are taken from the run memo instead of being computed again) and "
        "computes `RAGAS = 4 / (1/F + 1/AR + 1/CP + 1/CR)`. A component of 0 (or a negative answer relevancy) "
        "makes RAGAS 0, the harmonic mean's limit. A component ragas cannot compute makes the row a parse "
        "failure with every missing component's reason: a harmonic mean of three would not be comparable with "
        "one of four. The four components are metrics too, and the row's details hold each one's explanation "
        "(claims, generated questions, chunk verdicts, expected-answer sentences). " + RAGAS_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = ALL_INPUTS
    parameters: ClassVar[tuple[Param, ...]] = (
        JUDGE_KEY, EMBEDDING_MODEL,
        Param("strictness", int, 3, "How many questions the judge generates from each answer (answer relevancy).",
              min=1, max=10),
    )
    model_params: ClassVar[dict[str, str]] = {"embedding_model": "embedding"}
    uses_embeddings: ClassVar[bool] = True
    # Embeddings come from the models extra's sentence-transformers.
    extra: ClassVar[str | None] = "ragas,models"
    needs_modules: ClassVar[tuple[str, ...]] = ('ragas', 'langchain_core', 'torch', 'sentence_transformers')
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("ragas", "RAGAS", "Harmonic mean of faithfulness, answer relevancy, context precision and context "
               "recall.", threshold=0.75, is_primary=True),
        Metric("faithfulness", "Faithfulness", "Share of the actual answer's claims that can be inferred from the "
               "retrieved context.", threshold=0.75, raises_problems=False),
        Metric("answer_relevancy", "Answer relevancy", "Mean cosine similarity between the question and questions "
               "generated from the actual answer.", value_range=(-1.0, 1.0), threshold=0.75, raises_problems=False),
        Metric("context_precision", "Context precision", "Average precision of the retrieved chunks useful for the "
               "expected answer.", threshold=0.75, raises_problems=False),
        Metric("context_recall", "Context recall", "Share of the expected answer's sentences attributable to the "
               "retrieved context.", threshold=0.75, raises_problems=False),
        parse_failure_metric("ragas", "RAGAS"),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            what="answer relevancy range: catalogue [0, 1], Sonar [-1, 1]",
            why="ragas's answer relevancy is a mean cosine similarity, negative for a generated question opposed "
                "to the one asked; Sonar reports ragas's value as it is",
            action="read a negative value as 0 when comparing with H2O Sonar's numbers",
            field="metric:answer_relevancy",
        ),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._answer_relevance import AnswerRelevancy
        from ragas.metrics._context_precision import LLMContextPrecisionWithReference
        from ragas.metrics._context_recall import LLMContextRecall
        from ragas.metrics._faithfulness import Faithfulness

        return {"faithfulness": Faithfulness(llm=llm),
                "answer_relevancy": AnswerRelevancy(llm=llm, embeddings=embeddings, strictness=self.params["strictness"]),
                "context_precision": LLMContextPrecisionWithReference(llm=llm),
                "context_recall": LLMContextRecall(llm=llm)}

    def texts_to_embed(self, row: Row) -> list[str]:
        return [row.input or ""]  # answer relevancy's question

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        values: dict[str, float | None] = {name: scored[name].value for name in COMPONENTS}
        embed = lambda texts: self.ctx.embed(texts, self.params["embedding_model"])  # noqa: E731
        details: dict[str, Any] = {
            "judge": self._judge_key,
            "claims": claim_details(scored["faithfulness"]),
            "generated_questions": generated_questions(scored["answer_relevancy"], row.input, embed)
            if values["answer_relevancy"] is not None else [],
            "chunks": chunk_verdicts(scored["context_precision"], row.context),
            "expected_answer_sentences": sentence_attributions(scored["context_recall"]),
        }
        missing = [name for name in COMPONENTS if values[name] is None]
        if missing:
            reasons = "; ".join(f"{NAMES[name]}: {scored[name].failure or 'ragas has no score (NaN)'}" for name in missing)
            details["judge_answers"] = [a for name in missing for a in scored[name].answers()]
            return RowResult({"ragas": None, **values, "ragas_parse_failures": 1.0}, details=details,
                             error_message=f"judge {self._judge_key}: no RAGAS score, missing {reasons}")
        score = harmonic_mean([values[name] for name in COMPONENTS])
        message = None
        if score < self.threshold():
            low = sorted(COMPONENTS, key=lambda name: values[name])
            message = "lowest components: " + ", ".join(f"{NAMES[n]} {values[n]:.2f}" for n in low[:2])
        return RowResult({"ragas": score, **values, "ragas_parse_failures": 0.0}, details=details,
                         error_message=message)
