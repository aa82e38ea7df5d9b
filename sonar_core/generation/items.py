"""From written and scored items to outcomes (kept, flagged, dropped, failed) and the suite's lines.

A suite line is a test case ``sonar run --test-suite`` takes as it is (docs/hosts.md): ``test_case_key``,
``input`` (the question), ``expected_output`` (the reference answer), ``context`` (the supporting
chunks' texts, so RAG evaluators can compare them with what a system retrieves) and ``categories``
(the question type and the language), plus two fields the run leaves alone: ``provenance`` (source
file, chunk ids, type, persona, style, language, seed, generator model, prompt version, repairs) and
``quality`` (every score, :mod:`.quality`).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..findings.generation_summary import DROPPED, FAILED, FLAGGED, KEPT
from ..findings.judge_trust import JudgeTrust
from .graph import DocumentGraph
from .prompts import PROMPT_VERSION
from .quality import combine
from .records import ItemOutcome, RuleScores, SuiteLine

__all__ = ["item_outcomes", "suite_lines"]


def item_outcomes(written: Sequence[Any], rules: Sequence[RuleScores],
                  judged: dict[str, dict[str, tuple[int | None, str]]], trust: dict[str, JudgeTrust],
                  spec) -> list[ItemOutcome]:
    """Every planned item's outcome, in plan order (``rules``: one per written item with a reply, in order)."""
    outcomes: list[ItemOutcome] = []
    scored = iter(rules)
    for item in written:
        plan = item.plan
        outcome: ItemOutcome = {"key": plan.key, "type": plan.type, "source": plan.source, "topic": plan.topic,
                                   "language": plan.language, "status": FAILED, "reason": item.error, "quality": None}
        if item.reply is not None:
            verdicts = {name: values[plan.key] for name, values in judged.items() if plan.key in values}
            quality = combine(next(scored), verdicts, trust, plan.type == "unanswerable")
            outcome["quality"] = quality
            if quality["score"] >= spec.min_quality:
                outcome["status"], outcome["reason"] = KEPT, None
            else:
                why = ", ".join(quality["failed"])
                if quality.get("duplicate_of"):
                    why = why.replace("near_duplicate", f"near_duplicate of {quality['duplicate_of']}")
                outcome["status"] = FLAGGED if spec.keep_low_quality else DROPPED
                outcome["reason"] = f"quality {quality['score']:.2f} below {spec.min_quality:g}: failed {why}"
        outcomes.append(outcome)
    return outcomes


def suite_lines(written: Sequence[Any], outcomes: Sequence[ItemOutcome], graph: DocumentGraph, spec,
                generator: str) -> list[SuiteLine]:
    """The suite's test cases: the kept and flagged items, in plan order."""
    lines: list[SuiteLine] = []
    for item, outcome in zip(written, outcomes):
        if outcome["status"] not in (KEPT, FLAGGED):
            continue
        plan, reply = item.plan, item.reply
        sources = sorted({graph.chunks[graph.index[c]]["source"] for c in reply.chunk_ids})
        quality = dict(outcome["quality"])
        if outcome["status"] == FLAGGED:
            quality["flagged"] = True
        lines.append({
            "test_case_key": plan.key,
            "input": reply.question,
            "expected_output": reply.answer,
            "context": [graph.chunks[graph.index[c]]["text"] for c in reply.chunk_ids],
            "categories": [plan.type, plan.language],
            "provenance": {
                "source": plan.source, "sources": sources, "chunk_ids": list(reply.chunk_ids),
                "planned_chunk_ids": list(plan.chunk_ids), "type": plan.type,
                **({"planned_type": plan.planned_type} if plan.planned_type else {}),
                "topic": plan.topic, "persona": plan.persona, "style": plan.style, "language": plan.language,
                "seed": spec.seed, "generator": generator, "prompt_version": PROMPT_VERSION,
                "attempts": item.attempts, "repairs": list(item.repairs),
            },
            "quality": quality,
        })
    return lines
