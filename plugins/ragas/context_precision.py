"""Context Precision (RAGAS): are the chunks useful for the expected answer ranked first?"""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Input, Metric, Row, RowResult

from .base import RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric

__all__ = ["ContextPrecisionEvaluator", "chunk_verdicts"]


def chunk_verdicts(scored: Scored, chunks: list[str]) -> list[dict[str, Any]]:
    """Per retrieved chunk, in rank order: whether the judge found it useful, and why."""
    from ragas.metrics._context_precision import Verification

    verdicts = scored.of_type(Verification)
    return [{"rank": i + 1, "chunk": clip(chunk, 200), "useful": bool(v.verdict), "reason": v.reason}
            for i, (chunk, v) in enumerate(zip(chunks, verdicts))]


def precision_message(chunks: list[dict[str, Any]]) -> str:
    useful = [c["rank"] for c in chunks if c["useful"]]
    if not useful:
        return f"none of the {len(chunks)} chunks is useful for the expected answer"
    above = [c for c in chunks if not c["useful"] and c["rank"] < useful[-1]]
    listed = "; ".join(f"rank {c['rank']} ({clip(c['reason'], 80)})" for c in above[:3])
    return (f"useful chunks at rank {', '.join(map(str, useful))} of {len(chunks)}; ranked above a useful one but not "
            f"useful: {listed}")


class ContextPrecisionEvaluator(RagasEvaluator):
    """``context_precision`` per row from ragas's ``LLMContextPrecisionWithReference``."""

    id = "context_precision"
    display_name: ClassVar[str] = "Context Precision"
    tagline: ClassVar[str] = ("RAGAS: whether the retrieved chunks useful for the expected answer are ranked at "
                               "the top, with the judge's verdict on each chunk.")
    description: ClassVar[str] = (
        "The judge decides, chunk by chunk, whether each retrieved chunk was useful for arriving at the expected "
        "answer. The score is the average precision over the ranks: `sum_k(precision@k * useful_k) / (useful "
        "chunks)`, where precision@k is the share of useful chunks among the first k (useful, not useful, useful "
        "-> (1/1 + 2/3) / 2 = 0.8333); no useful chunk scores 0. The row's details list each chunk's verdict and "
        "reason (`chunks`). " + RAGAS_NOTE
    )
    category: ClassVar[str] = "Retrieval"
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.EXPECTED_ANSWER, Input.RETRIEVED_CONTEXT)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("context_precision", "Context precision", "Average precision of the retrieved chunks the judge found "
               "useful for the expected answer: 1 when they are all ranked first.", threshold=0.75, is_primary=True),
        parse_failure_metric("context_precision", "Context precision"),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._context_precision import LLMContextPrecisionWithReference

        return {"context_precision": LLMContextPrecisionWithReference(llm=llm)}

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["context_precision"]
        if s.value is None:
            if s.failure is None:
                s.failure = "ragas has no score (NaN)"
            return self.failed_result(s, {"context_precision": None, "context_precision_parse_failures": 1.0})
        chunks = chunk_verdicts(s, row.context)
        message = precision_message(chunks) if s.value < self.threshold() and chunks else None
        return RowResult({"context_precision": s.value, "context_precision_parse_failures": 0.0},
                         details={"judge": self._judge_key, "chunks": chunks}, error_message=message)
