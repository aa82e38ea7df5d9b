"""What a test-set generation concludes, before anything is written (``sonar generate``'s report).

:func:`summarize_generation` is a pure function of the planned items' outcomes (plain dicts), the
documents' and graph's facts, the judge's trust and the cost ledger's record: coverage per source,
topic, type and language (planned, kept, dropped, failed); each quality score's distribution with
its sample size and a Wilson interval on the share of items passing; what was dropped and why;
and, for an empty result, the reason in one line. The writer (:mod:`sonar_core.artifacts.
generation_report`) only serialises it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence, TypedDict

from ..jsontypes import JsonObject
from .judge_status import JudgeTrustJson
from .statistics import wilson_interval

__all__ = ["GenerationFindings", "ScoreSummary", "SimilaritySummary", "OverallScore", "DroppedItem", "ItemQuality", "ItemOutcome", "summarize_generation", "KEPT", "FLAGGED", "DROPPED", "FAILED", "SCORES"]

KEPT, FLAGGED, DROPPED, FAILED = "kept", "flagged", "dropped", "failed"
SCORES = ("groundedness", "answerability", "self_contained", "language_match")
_SIMILARITY_BINS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0001)


class ItemQuality(TypedDict, total=False):
    """An item's quality record (:func:`sonar_core.generation.quality.combine`): every score (None: the judge gave no verdict), which checks counted and
    failed, its ``score`` (the share of counted checks passed) and each judged check's trust."""
    groundedness: int | None
    answerability: int | None
    notes: list[str]
    self_contained: int
    language_match: int
    near_duplicate: float
    self_reference: str
    duplicate_of: str
    counted: list[str]
    failed: list[str]
    score: float
    judge_trust: dict[str, str]
    flagged: bool  #: in the suite: kept though below the bar (keep_low_quality)


class ItemOutcome(TypedDict):
    """What became of a planned item (:data:`KEPT`, :data:`FLAGGED`, :data:`DROPPED`, :data:`FAILED`), and why; its quality None when it failed to be written."""
    key: str
    type: str
    source: str
    topic: int
    language: str
    status: str
    reason: str | None
    quality: ItemQuality | None


class SkippedDocument(TypedDict):
    source: str
    reason: str


class DocumentsRecord(TypedDict):
    """The documents read: how many, those skipped and why, and their sources."""

    read: int
    skipped: list[SkippedDocument]
    sources: list[str]


class GraphRecord(TypedDict):
    """The document graph: its cache key, chunks kept, duplicate and too-short chunks, topics and links,
    whether it was reused, seconds to build, the first duplicate chunks and each topic's label."""

    key: str
    chunks: int
    duplicates: int
    short_chunks: int
    topics: int
    links: int
    reused: bool
    seconds: float
    duplicate_chunks: list[JsonObject]
    topic_labels: list[JsonObject]


@dataclass(frozen=True)
class ScoreSummary:
    """One quality score over the items asked about it: ``n`` with a verdict, ``passed`` and ``failed`` of
    them, ``missing`` without one, the share passing (4 places) and its 95% Wilson interval, and the
    judge's trust (None: a rule, not a judge)."""

    n: int
    passed: int
    failed: int
    missing: int
    share_passed: float | None
    interval_95: tuple[float, float] | None
    trust: str | None


@dataclass(frozen=True)
class SimilaritySummary:
    """Each item's question similarity to its closest other item: ``n`` items, the highest and the mean
    (4 places), how many fall in each bin (``from``, ``to``, ``items``) and how many were dropped as copies."""

    n: int
    max: float | None
    mean: float | None
    bins: tuple[Mapping[str, float], ...]
    duplicates: int


@dataclass(frozen=True)
class OverallScore:
    """The items' overall quality score: ``n`` scored, their ``mean`` (4 places), how many are ``perfect`` (1.0)."""

    n: int
    mean: float | None
    perfect: int


@dataclass(frozen=True)
class DroppedItem:
    """An item dropped, failed or flagged: its key, status, type, source document and why."""

    key: str
    status: str
    type: str
    source: str
    reason: str


@dataclass
class GenerationFindings:
    """The generation report's content (``<stem>.report.json``; docs/generate.md)."""

    status: str
    #: Why nothing was kept (one line), or None.
    empty_reason: str | None
    counts: dict[str, int]
    coverage: dict[str, dict[str, dict[str, int]]]
    #: Each score of :data:`SCORES`, then ``near_duplicate`` and ``score``.
    quality: Mapping[str, ScoreSummary | SimilaritySummary | OverallScore]
    dropped: list[DroppedItem]
    documents: DocumentsRecord
    graph: GraphRecord
    #: Check -> its judge's trust.
    judges: dict[str, JudgeTrustJson]
    #: The cost ledger's record (run.json's ``costs`` shape, ``llm.ledger.CostsRecord``).
    costs: JsonObject | None
    #: The generation's settings as given (its configuration's JSON dump, the generator, judge and quotas).
    settings: JsonObject
    notes: list[str] = field(default_factory=list)


def _coverage(items: Sequence[ItemOutcome], field_name: str, names: dict[str, str] | None = None
              ) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for item in items:
        key = str(item[field_name])
        row = table.setdefault((names or {}).get(key, key), {"planned": 0, KEPT: 0, FLAGGED: 0, DROPPED: 0, FAILED: 0})
        row["planned"] += 1
        row[item["status"]] += 1
    return dict(sorted(table.items()))


def _score_summary(items: Sequence[ItemOutcome], name: str, trust: str | None) -> ScoreSummary:
    # Unanswerable items are not asked about groundedness (their reference says the documents are silent).
    values = [item["quality"].get(name) for item in items if item.get("quality")
              and not (name == "groundedness" and item["type"] == "unanswerable")]
    scored = [v for v in values if v is not None]
    passed = sum(1 for v in scored if v == 1)
    interval = wilson_interval(passed, len(scored)) if scored else None
    return ScoreSummary(n=len(scored), passed=passed, failed=len(scored) - passed, missing=len(values) - len(scored),
                        share_passed=round(passed / len(scored), 4) if scored else None,
                        interval_95=(round(interval.low, 4), round(interval.high, 4)) if interval else None,
                        trust=trust)


def _similarity_summary(items: Sequence[ItemOutcome]) -> SimilaritySummary:
    values = [item["quality"]["near_duplicate"] for item in items if item.get("quality")]
    bins = []
    for low, high in zip(_SIMILARITY_BINS, _SIMILARITY_BINS[1:]):
        bins.append({"from": low, "to": min(high, 1.0), "items": sum(1 for v in values if low <= v < high)})
    duplicates = sum(1 for item in items if (item.get("quality") or {}).get("duplicate_of"))
    return SimilaritySummary(n=len(values), max=max(values) if values else None,
                             mean=round(sum(values) / len(values), 4) if values else None, bins=tuple(bins),
                             duplicates=duplicates)


def _empty_reason(items: Sequence[ItemOutcome], notes: Sequence[str]) -> str:
    if not items:
        return notes[0] if notes else "nothing was planned"
    if all(i["status"] == FAILED for i in items):
        first = items[0].get("reason") or "unknown"
        return f"every item failed to be written (the first: {first})"
    return "every item was dropped for its quality (see the dropped items and their reasons)"


def summarize_generation(items: Sequence[ItemOutcome], *, documents: DocumentsRecord, graph: GraphRecord,
                         trust: dict[str, JudgeTrustJson], costs: JsonObject | None, settings: JsonObject,
                         notes: Sequence[str] = ()) -> GenerationFindings:
    """The findings of one generation; ``items`` are every planned item's outcome (``key``, ``type``, ``source``,
    ``topic``, ``language``, ``status``, ``reason``, ``quality``), ``trust`` check -> JudgeTrust dict."""
    counts = {"planned": len(items)}
    for status in (KEPT, FLAGGED, DROPPED, FAILED):
        counts[status] = sum(1 for item in items if item["status"] == status)
    in_suite = counts[KEPT] + counts[FLAGGED]
    # A topic is shown with its label ("1: damage, claim, covered").
    topics = {str(t["topic"]): f"{t['topic']}: {t['label']}" for t in graph.get("topic_labels") or ()}
    quality: dict[str, ScoreSummary | SimilaritySummary | OverallScore] = {
        name: _score_summary(items, name, (trust.get(name) or {}).get("status")) for name in SCORES}
    quality["near_duplicate"] = _similarity_summary(items)
    scores = [item["quality"]["score"] for item in items if item.get("quality")]
    quality["score"] = OverallScore(n=len(scores), mean=round(sum(scores) / len(scores), 4) if scores else None,
                                    perfect=sum(1 for s in scores if s == 1.0))
    dropped = [DroppedItem(key=item["key"], status=item["status"], type=item["type"], source=item["source"],
                           reason=item.get("reason") or "") for item in items if item["status"] in (DROPPED, FAILED, FLAGGED)]
    return GenerationFindings(
        status="ok" if in_suite else "empty",
        empty_reason=None if in_suite else _empty_reason(items, notes),
        counts=counts,
        coverage={name: _coverage(items, name, topics if name == "topic" else None)
                  for name in ("source", "topic", "type", "language")},
        quality=quality, dropped=dropped, documents=documents, graph=graph, judges=trust, costs=costs,
        settings=settings, notes=list(notes))
