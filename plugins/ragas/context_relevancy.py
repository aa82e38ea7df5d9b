"""Context Relevance (RAGAS): does the retrieved context hold what the question needs? ragas 0.4's
``ContextRelevance``, kept for ragas users as ``ragas_context_relevance``; the catalogue's context relevancy
(relevant sentences / all sentences) is the judge evaluator ``context_relevancy`` (plugins/judge)."""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Difference, Input, Metric, Row, RowResult

from .base import RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric

__all__ = ["RagasContextRelevanceEvaluator", "ratings"]


def _rating(answer: str | None) -> int | None:
    # ragas's own reading (ContextRelevance.process_score): the first of 2, 1, 0 found anywhere.
    if answer is None:
        return None
    return next((i for i in (2, 1, 0) if str(i) in answer), None)


def ratings(scored: Scored) -> list[dict[str, Any]]:
    """The judge's rating (0, 1 or 2) under each of ragas's two prompts, with the raw answer."""
    by_prompt: dict[str, dict[str, Any]] = {}
    for call in scored.calls:
        entry = by_prompt.setdefault(call["prompt"], {"answer": None, "rating": None})
        if entry["rating"] is None:  # ragas re-asks an unreadable answer; the first readable one counts
            entry["answer"] = None if call["answer"] is None else clip(call["answer"], 200)
            entry["rating"] = _rating(call["answer"])
    return [{"prompt": n + 1, **entry} for n, entry in enumerate(by_prompt.values())]


class RagasContextRelevanceEvaluator(RagasEvaluator):
    """``ragas_context_relevance`` per row from ragas's ``ContextRelevance``."""

    id = "ragas_context_relevance"
    display_name: ClassVar[str] = "Context Relevance (RAGAS)"
    tagline: ClassVar[str] = ("RAGAS: the judge rates, twice, whether the retrieved context holds what the "
                               "question needs (0, 1 or 2).")
    description: ClassVar[str] = (
        "ragas 0.4's `ContextRelevance`, for ragas users (not in the catalogue: the catalogue's context relevancy, "
        "relevant context sentences / context sentences, is the judge evaluator `context_relevancy`). The judge "
        "rates the "
        "retrieved context against the question under two differently worded prompts, each 0 (not relevant), "
        "1 (partly) or 2 (relevant), and `context relevancy = (rating1 + rating2) / 4` (2 and 1 -> 0.75); when "
        "only one answer holds a rating, that one counts. An answer without a rating is asked again up to 5 "
        "times (from the cache, so an unreadable cached answer stays unreadable). A context identical to, or "
        "contained in, the question scores 0 without a call. The row's details list both ratings with the raw "
        "answers (`ratings`). No rating in either answer is a parse failure. " + RAGAS_NOTE
    )
    category: ClassVar[str] = "Retrieval"
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.RETRIEVED_CONTEXT)
    answer_max_tokens: ClassVar[int | None] = 16
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("ragas_context_relevance", "Context relevance (RAGAS)", "Mean of the judge's two ratings (0, 1 or 2) "
               "of how relevant the retrieved context is to the question, divided by 2.", threshold=0.75,
               is_primary=True),
        parse_failure_metric("ragas_context_relevance", "Context relevance (RAGAS)"),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            what="formula: the catalogue's relevant context sentences / all context sentences; Sonar computes "
                 "ragas 0.4's ContextRelevance, the judge's 0/1/2 rating asked twice and scaled to [0, 1]",
            why="ragas 0.4 dropped the sentence-extraction metric the catalogue describes",
            action="only five values are possible (0, 0.25, 0.5, 0.75, 1): do not compare them with H2O "
                   "Sonar's sentence ratios",
            field="formula",
        ),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._nv_metrics import ContextRelevance

        return {"context_relevancy": ContextRelevance(llm=llm)}

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["context_relevancy"]
        found = ratings(s)
        if s.value is None:
            if s.failure is None:
                s.failure = "neither answer holds a rating 0, 1 or 2, so ragas has no score (NaN)"
            return self.failed_result(s, {"ragas_context_relevance": None,
                                          "ragas_context_relevance_parse_failures": 1.0})
        message = None
        if s.value < self.threshold():
            given = " and ".join(str(r["rating"]) for r in found if r["rating"] is not None) or "none (no call needed)"
            message = f"the judge rated the context's relevance to the question {given} (of 2)"
        return RowResult({"ragas_context_relevance": s.value, "ragas_context_relevance_parse_failures": 0.0},
                         details={"judge": self._judge_key, "ratings": found}, error_message=message)
