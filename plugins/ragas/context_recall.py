"""Context Recall (RAGAS): the share of the expected answer's sentences the retrieved context supports."""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Input, Metric, Row, RowResult

from .base import RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric, quote

__all__ = ["ContextRecallEvaluator", "sentence_attributions"]


def sentence_attributions(scored: Scored) -> list[dict[str, Any]]:
    """The expected answer's sentences with the judge's verdict: attributable to the context or not."""
    from ragas.metrics._context_recall import ContextRecallClassifications

    found = scored.of_type(ContextRecallClassifications)
    if not found:
        return []
    return [{"sentence": c.statement, "attributed": bool(c.attributed), "reason": c.reason}
            for c in found[-1].classifications]


def recall_message(sentences: list[dict[str, Any]]) -> str:
    missing = [s for s in sentences if not s["attributed"]]
    listed = "; ".join(f"{quote(s['sentence'])} ({clip(s['reason'], 80)})" for s in missing[:3])
    more = f"; and {len(missing) - 3} more" if len(missing) > 3 else ""
    return f"{len(missing)} of {len(sentences)} expected-answer sentences not found in the context: {listed}{more}"


class ContextRecallEvaluator(RagasEvaluator):
    """``context_recall`` per row from ragas's ``LLMContextRecall``."""

    id = "context_recall"
    display_name: ClassVar[str] = "Context Recall"
    tagline: ClassVar[str] = ("RAGAS: the share of the expected answer's sentences that can be attributed to the "
                               "retrieved context, with the verdict on each.")
    description: ClassVar[str] = (
        "The judge splits the expected answer into sentences and decides for each whether it can be attributed "
        "to the retrieved context: `context recall = attributed sentences / sentences` (1 of 2 -> 0.5). The "
        "row's details list the sentences with the verdict and reason (`expected_answer_sentences`). No "
        "classified sentence means no score (ragas's NaN): a parse failure. " + RAGAS_NOTE
    )
    category: ClassVar[str] = "Retrieval"
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.RETRIEVED_CONTEXT)
    optional_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION,)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("context_recall", "Context recall", "Share of the expected answer's sentences that can be attributed "
               "to the retrieved context.", threshold=0.75, is_primary=True),
        parse_failure_metric("context_recall", "Context recall"),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._context_recall import LLMContextRecall

        return {"context_recall": LLMContextRecall(llm=llm)}

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["context_recall"]
        if s.value is None:
            if s.failure is None:
                s.failure = "the judge classified no sentence of the expected answer, so ragas has no score (NaN)"
            return self.failed_result(s, {"context_recall": None, "context_recall_parse_failures": 1.0})
        sentences = sentence_attributions(s)
        message = recall_message(sentences) if s.value < self.threshold() and sentences else None
        return RowResult({"context_recall": s.value, "context_recall_parse_failures": 0.0},
                         details={"judge": self._judge_key, "expected_answer_sentences": sentences},
                         error_message=message)
