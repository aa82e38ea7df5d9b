"""Answer Correctness (RAGAS): factuality F1 against the expected answer, blended with semantic similarity."""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Input, Metric, Param, ParameterError, Row, RowResult
from sonar_plugins.catalogue_differences import minilm_for

from .base import EMBEDDING_MODEL, JUDGE_KEY, RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric, quote

__all__ = ["AnswerCorrectnessEvaluator", "f1"]


def f1(tp: int, fp: int, fn: int) -> float:
    """ragas's F1 of statement presence (0 when there is no true positive)."""
    return 0.0 if tp == 0 else tp / (tp + 0.5 * (fp + fn))


def classification(scored: Scored) -> dict[str, list[dict[str, str]]] | None:
    from ragas.metrics._answer_correctness import ClassificationWithReason

    found = scored.of_type(ClassificationWithReason)
    if not found:
        return None
    c = found[-1]
    return {kind: [{"statement": s.statement, "reason": s.reason} for s in getattr(c, kind)] for kind in ("TP", "FP", "FN")}


class AnswerCorrectnessEvaluator(RagasEvaluator):
    """``answer_correctness`` per row from ragas's ``AnswerCorrectness``."""

    id = "answer_correctness"
    display_name: ClassVar[str] = "Answer Correctness"
    tagline: ClassVar[str] = ("RAGAS: the answer's statements checked against the expected answer's (F1), blended "
                               "with the semantic similarity of the two answers.")
    description: ClassVar[str] = (
        "The judge breaks the actual and the expected answer into statements and sorts them: TP (in the answer "
        "and supported by the expected answer), FP (in the answer only), FN (in the expected answer only). "
        "`factuality = |TP| / (|TP| + 0.5 * (|FP| + |FN|))` (0 without a true positive; 1 when neither answer "
        "yields a statement), `semantic similarity = cosine(emb(expected answer), emb(actual answer))`, and "
        "`answer correctness = (factuality_weight * factuality + similarity_weight * similarity) / "
        "(factuality_weight + similarity_weight)`, by default 0.75 and 0.25. Both parts are metrics too; the "
        "row's details list the three statement groups with the judge's reasons (`statements`). " + RAGAS_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    optional_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION,)
    compatibility: ClassVar[tuple[str, ...]] = ("llm", "rag")
    parameters: ClassVar[tuple[Param, ...]] = (
        JUDGE_KEY, EMBEDDING_MODEL,
        Param("factuality_weight", float, 0.75, "Weight of the factuality F1 in the blend.", min=0.0),
        Param("similarity_weight", float, 0.25, "Weight of the semantic similarity in the blend (0: no embeddings "
              "needed).", min=0.0),
    )
    model_params: ClassVar[dict[str, str]] = {"embedding_model": "embedding"}
    uses_embeddings: ClassVar[bool] = True
    # Embeddings come from the models extra's sentence-transformers.
    extra: ClassVar[str | None] = "ragas,models"
    needs_modules: ClassVar[tuple[str, ...]] = ('ragas', 'langchain_core', 'torch', 'sentence_transformers')
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("answer_correctness", "Answer correctness", "Weighted mean of the factuality F1 and the semantic "
               "similarity of the actual and the expected answer.", threshold=0.75, is_primary=True),
        Metric("answer_correctness_factuality", "Factuality", "F1 of the actual answer's statements against the "
               "expected answer's, as the judge classified them.", threshold=0.75, raises_problems=False),
        Metric("answer_correctness_similarity", "Semantic similarity", "Cosine similarity of the embeddings of the "
               "actual and the expected answer (empty when its weight is 0).", value_range=(-1.0, 1.0),
               threshold=0.75, raises_problems=False),
        parse_failure_metric("answer_correctness", "Answer correctness"),
    )
    differences = (minilm_for("BAAI/bge-small-en-v1.5", "semantic-similarity embeddings"),)

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._answer_correctness import AnswerCorrectness

        weights = [self.params["factuality_weight"], self.params["similarity_weight"]]
        if not any(weights):
            raise ParameterError(f"parameters 'factuality_weight' and 'similarity_weight' of evaluator '{self.id}' "
                                 "cannot both be 0")
        return {"answer_correctness": AnswerCorrectness(llm=llm, embeddings=embeddings, weights=weights)}

    def texts_to_embed(self, row: Row) -> list[str]:
        # The semantic similarity's two texts, unless its weight is 0 (then ragas embeds nothing).
        return [row.expected_output or "", row.actual_output or ""] if self.params["similarity_weight"] else []

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["answer_correctness"]
        keys = ("answer_correctness", "answer_correctness_factuality", "answer_correctness_similarity")
        if s.value is None:
            if s.failure is None:
                s.failure = "ragas has no score (NaN)"
            return self.failed_result(s, {**dict.fromkeys(keys), "answer_correctness_parse_failures": 1.0})
        groups = classification(s)
        factuality = 1.0 if groups is None else f1(len(groups["TP"]), len(groups["FP"]), len(groups["FN"]))
        similarity = next(iter(s.inner.values()), None) if self.params["similarity_weight"] else None
        message = None
        if s.value < self.threshold() and groups is not None:
            wrong = groups["FP"][:2]
            missed = groups["FN"][:2]
            parts = [f"{len(groups['TP'])} statements match the expected answer"]
            if wrong:
                parts.append(f"{len(groups['FP'])} not supported by it: " + "; ".join(quote(w["statement"]) for w in wrong))
            if missed:
                parts.append(f"{len(groups['FN'])} of it missing: " + "; ".join(quote(m["statement"]) for m in missed))
            message = clip(", ".join(parts), 1000)
        values = {"answer_correctness": s.value, "answer_correctness_factuality": factuality,
                  "answer_correctness_similarity": similarity, "answer_correctness_parse_failures": 0.0}
        return RowResult(values, details={"judge": self._judge_key, "statements": groups}, error_message=message)
