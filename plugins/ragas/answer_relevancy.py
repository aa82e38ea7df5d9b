"""Answer Relevancy (RAGAS): how close questions generated from the answer are to the question asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sonar_core import Difference, Input, Metric, Param, Row, RowResult

from .base import EMBEDDING_MODEL, JUDGE_KEY, RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric, quote

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["AnswerRelevancyEvaluator", "generated_questions"]


def generated_questions(scored: Scored, question: str, embed) -> list[dict[str, Any]]:
    """The questions the judge generated from the answer, each with its noncommittal flag and its cosine
    similarity to the question asked (the vectors are the ones ragas used: cached by the service)."""
    import numpy as np

    from ragas.metrics._answer_relevance import ResponseRelevanceOutput

    outputs = scored.of_type(ResponseRelevanceOutput)
    texts = [o.question for o in outputs]
    sims: list[float | None] = [None] * len(texts)
    if any(texts):
        vectors = embed([question] + texts)
        norms = np.linalg.norm(vectors, axis=1)
        sims = [float(vectors[0] @ v / (norms[0] * n)) if n else None for v, n in zip(vectors[1:], norms[1:])]
    return [{"question": o.question, "noncommittal": bool(o.noncommittal), "similarity": sim}
            for o, sim in zip(outputs, sims)]


def low_relevancy_message(questions: list[dict[str, Any]]) -> str:
    if questions and all(q["noncommittal"] for q in questions):
        return "the judge found the answer noncommittal (evasive or vague), which scores 0"
    # Repeated askings often give the same question: each is shown once.
    distinct = {q["question"]: q["similarity"] for q in questions if q["similarity"] is not None}
    shown = "; ".join(f"{quote(text)} ({sim:.2f})" for text, sim in list(distinct.items())[:3])
    return f"the answer answers other questions than the one asked: {shown}"


class AnswerRelevancyEvaluator(RagasEvaluator):
    """``answer_relevancy`` per row from ragas's ``AnswerRelevancy`` (ResponseRelevancy)."""

    id = "answer_relevancy"
    display_name: ClassVar[str] = "Answer Relevancy"
    tagline: ClassVar[str] = ("RAGAS: the judge writes questions the answer would answer; the closer they are to the "
                               "question asked, the more relevant the answer.")
    description: ClassVar[str] = (
        "The judge generates `strictness` questions (default 3) that the actual answer would answer and says "
        "whether the answer is noncommittal; `answer relevancy = mean(cosine(emb(generated question), "
        "emb(question)))`, or 0 when every generated question marks the answer noncommittal. Each generated "
        "question is one request with its own repeat index (its own cache entry). The row's details list the "
        "generated questions with their similarity (`generated_questions`). A cosine can be negative, so a score "
        "can fall below 0. As the catalogue says, the retrieved context is a required input: a row without it is "
        "skipped and the report names it, although ragas's metric reads only the question and the answer. "
        + RAGAS_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (
        JUDGE_KEY, EMBEDDING_MODEL,
        Param("strictness", int, 3, "How many questions the judge generates from each answer.", min=1, max=10),
    )
    model_params: ClassVar[dict[str, str]] = {"embedding_model": "embedding"}
    uses_embeddings: ClassVar[bool] = True
    # Embeddings come from the models extra's sentence-transformers.
    extra: ClassVar[str | None] = "ragas,models"
    needs_modules: ClassVar[tuple[str, ...]] = ('ragas', 'langchain_core', 'torch', 'sentence_transformers')
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            "answer relevancy range: catalogue [0, 1], Sonar [-1, 1]",
            "ragas's answer relevancy is a mean cosine similarity, negative for a generated question opposed to the "
            "one asked; Sonar reports ragas's value as it is",
            "read a negative value as 0 when comparing with H2O Sonar's numbers",
            field="metric:answer_relevancy",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("answer_relevancy", "Answer relevancy", "Mean cosine similarity between the question and the questions "
               "the judge generated from the actual answer (0 for a noncommittal answer).", value_range=(-1.0, 1.0),
               threshold=0.75, is_primary=True),
        parse_failure_metric("answer_relevancy", "Answer relevancy"),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._answer_relevance import AnswerRelevancy

        return {"answer_relevancy": AnswerRelevancy(llm=llm, embeddings=embeddings,
                                                    strictness=self.params["strictness"])}

    def texts_to_embed(self, row: Row) -> list[str]:
        return [row.input or ""]  # the question; the generated questions are known only later

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["answer_relevancy"]
        if s.value is None:
            if s.failure is None:
                s.failure = "every question the judge generated is empty, so ragas has no score (NaN)"
            return self.failed_result(s, {"answer_relevancy": None, "answer_relevancy_parse_failures": 1.0})
        questions = generated_questions(s, row.input, lambda texts: self.ctx.embed(texts, self.params["embedding_model"]))
        message = low_relevancy_message(questions) if s.value < self.threshold() else None
        return RowResult({"answer_relevancy": s.value, "answer_relevancy_parse_failures": 0.0},
                         details={"judge": self._judge_key, "generated_questions": questions},
                         error_message=clip(message, 1000) if message else None)
