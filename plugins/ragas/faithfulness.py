"""Faithfulness (RAGAS): the share of the answer's claims the retrieved context supports."""

from __future__ import annotations

from typing import Any, ClassVar

from sonar_core import Input, Metric, Row, RowResult

from .base import RAGAS_NOTE, RagasEvaluator, Scored, clip, parse_failure_metric, quote

__all__ = ["FaithfulnessEvaluator", "claim_details"]


def claim_details(scored: Scored) -> list[dict[str, Any]]:
    """The claims ragas extracted from the answer with the judge's verdict and reason on each."""
    from ragas.metrics._faithfulness import NLIStatementOutput

    verdicts = scored.of_type(NLIStatementOutput)
    if not verdicts:
        return []
    return [{"claim": v.statement, "supported": bool(v.verdict), "reason": v.reason} for v in verdicts[-1].statements]


def unsupported_message(claims: list[dict[str, Any]]) -> str:
    bad = [c for c in claims if not c["supported"]]
    listed = "; ".join(f"{quote(c['claim'])} ({clip(c['reason'], 80)})" for c in bad[:3])
    more = f"; and {len(bad) - 3} more" if len(bad) > 3 else ""
    return f"{len(bad)} of {len(claims)} claims not supported by the context: {listed}{more}"


class FaithfulnessEvaluator(RagasEvaluator):
    """``faithfulness`` per row: supported claims / claims, from ragas's ``Faithfulness``."""

    id = "faithfulness"
    display_name: ClassVar[str] = "Faithfulness"
    tagline: ClassVar[str] = ("RAGAS: the share of the answer's claims that the retrieved context supports, "
                               "with each claim and the judge's verdict.")
    description: ClassVar[str] = (
        "The judge breaks the actual answer into stand-alone claims, then decides for each whether it can be "
        "inferred from the retrieved context: `faithfulness = supported claims / claims` (3 of 4 supported -> "
        "0.75). Each row's details list the claims with the verdict and reason (`claims`); a failing row's "
        "message names the unsupported ones. An answer from which the judge extracts no claim has no score "
        "(ragas's NaN) and is a parse failure. The question, when present, helps the judge resolve pronouns. "
        + RAGAS_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    optional_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION,)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("faithfulness", "Faithfulness", "Share of the actual answer's claims that can be inferred from the "
               "retrieved context.", threshold=0.75, is_primary=True),
        parse_failure_metric("faithfulness", "Faithfulness"),
    )

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        from ragas.metrics._faithfulness import Faithfulness

        return {"faithfulness": Faithfulness(llm=llm)}

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        s = scored["faithfulness"]
        if s.value is None:
            if s.failure is None:
                s.failure = "the judge extracted no claim from the answer, so ragas has no score (NaN)"
            return self.failed_result(s, {"faithfulness": None, "faithfulness_parse_failures": 1.0})
        claims = claim_details(s)
        message = None
        if s.value < self.threshold() and claims:
            message = unsupported_message(claims)
        return RowResult({"faithfulness": s.value, "faithfulness_parse_failures": 0.0},
                         details={"judge": self._judge_key, "claims": claims}, error_message=message)
