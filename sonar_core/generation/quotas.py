"""Coverage by quota: which items are written, from which chunks, chosen by the seed.

1. **Types.** ``n`` is split over the question types by their weights (largest remainder; ties go
   to the type listed first): ``single_hop`` (one fact of one chunk), ``multi_hop`` (a question
   needing two linked chunks), ``comparison`` (two linked chunks compared), ``summary`` (a chunk
   and its neighbours in the same section), ``unanswerable`` (on a chunk's subject, but not
   answered by the documents). Without any link in the graph, multi-hop and comparison slots
   become single-hop ones (the plan says so).
2. **Spread.** Slots are split over buckets: ``sources`` (each source file alike), ``topics`` (each
   topic alike) or ``proportional`` (each source by its share of usable chunks). A bucket with
   fewer usable chunks than its share gives the rest to the others.
3. **Chunks.** Within a bucket, the least-used usable chunk comes first, ties in an order shuffled
   by the seed; a usable chunk has at least ``min_tokens`` tokens (short boilerplate is never a
   question's seed). Personas and styles are dealt out in turn, in an order shuffled by the seed.

Everything is a function of the graph, the settings and the seed: the same inputs give the same plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Sequence, TypedDict

from .graph import DocumentGraph
from .language import UNDETERMINED


class Quotas(TypedDict, total=False):
    """How the plan split its items: per question type, the spread, and per bucket (source or topic); empty
    when no item could be planned."""
    types: dict[str, int]
    spread: str
    buckets: dict[str, int]

__all__ = ["ItemPlan", "Plan", "plan_items", "largest_remainder", "TYPES", "DEFAULT_WEIGHTS", "STYLES", "SPREADS"]

TYPES = ("single_hop", "multi_hop", "comparison", "summary", "unanswerable")
DEFAULT_WEIGHTS = {"single_hop": 4, "multi_hop": 2, "comparison": 1, "summary": 1, "unanswerable": 2}
STYLES = ("plain", "misspelt", "search-box", "long")
SPREADS = ("sources", "topics", "proportional")
_PAIRED = ("multi_hop", "comparison")


@dataclass(frozen=True)
class ItemPlan:
    """One item to write: its key, type, chunks (the seed chunk first), language, persona and style."""

    key: str
    type: str
    chunk_ids: tuple[str, ...]
    language: str
    source: str
    topic: int
    persona: str | None = None
    style: str = "plain"
    #: The type the quota asked for, when this item had to be written as another (no linked chunk).
    planned_type: str | None = None
    #: How many earlier items have the same type and chunks (the prompt asks for another detail).
    variant: int = 0


@dataclass
class Plan:
    items: list[ItemPlan] = field(default_factory=list)
    #: Why the plan is empty or smaller than asked (one line each), for the report.
    notes: list[str] = field(default_factory=list)
    usable_chunks: int = 0
    short_chunks: int = 0
    quotas: Quotas = field(default_factory=Quotas)


def largest_remainder(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights``: floors first, then one more to the largest
    remainders (ties to the earlier weight). All-zero weights split evenly."""
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1.0] * len(weights)
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    counts = [int(x) for x in exact]
    rest = total - sum(counts)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[:rest]:
        counts[i] += 1
    return counts


def _buckets(graph: DocumentGraph, usable: list[int], spread: str) -> list[tuple[str, list[int], float]]:
    """(bucket name, its usable rows, its weight), in a stable order."""
    groups: dict[Any, list[int]] = {}
    for row in usable:
        chunk = graph.chunks[row]
        groups.setdefault(chunk["topic"] if spread == "topics" else chunk["source"], []).append(row)
    names = sorted(groups, key=lambda g: (groups[g][0]))
    return [(f"topic {g}" if spread == "topics" else str(g), groups[g],
             float(len(groups[g])) if spread == "proportional" else 1.0) for g in names]


def _bucket_counts(total: int, buckets: list[tuple[str, list[int], float]]) -> list[int]:
    """Slots per bucket: by weight, a bucket's surplus over its usable chunks handed on to the others."""
    counts = largest_remainder(total, [w for _, _, w in buckets])
    for _ in range(len(buckets)):
        surplus = sum(max(0, c - len(b[1])) for c, b in zip(counts, buckets))
        open_ = [i for i, (c, b) in enumerate(zip(counts, buckets)) if c < len(b[1])]
        if not surplus or not open_:
            break
        counts = [min(c, len(b[1])) for c, b in zip(counts, buckets)]
        extra = largest_remainder(surplus, [buckets[i][2] for i in open_])
        for i, more in zip(open_, extra):
            counts[i] += more
    return counts


def _language(graph: DocumentGraph, row: int) -> str:
    chunk = graph.chunks[row]
    if chunk["language"] != UNDETERMINED:
        return chunk["language"]
    same = [c["language"] for c in graph.chunks if c["source"] == chunk["source"] and c["language"] != UNDETERMINED]
    return max(sorted(set(same)), key=same.count) if same else "en"


def _summary_rows(graph: DocumentGraph, row: int) -> list[int]:
    """The chunk and its neighbours (by position) of the same source and heading."""
    chunk = graph.chunks[row]
    rows = [row]
    for other, candidate in enumerate(graph.chunks):
        if other != row and candidate["source"] == chunk["source"] and candidate["heading"] == chunk["heading"] \
                and abs(candidate["position"] - chunk["position"]) == 1:
            rows.append(other)
    return rows[:3]


def plan_items(graph: DocumentGraph, n: int, *, seed: int = 0, weights: dict[str, float] | None = None,
               spread: str = "sources", personas: Sequence[str] = (), styles: Sequence[str] = ("plain",),
               min_tokens: int = 25) -> Plan:
    """The items to write; see the module docstring."""
    rng = random.Random(seed)
    plan = Plan()
    weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
    usable = [row for row, c in enumerate(graph.chunks) if c["tokens"] >= min_tokens]
    plan.usable_chunks, plan.short_chunks = len(usable), len(graph.chunks) - len(usable)
    if not graph.chunks:
        plan.notes.append("no text found in the documents")
        return plan
    if not usable:
        plan.notes.append(f"every chunk is too short to write a question from (fewer than {min_tokens} tokens)")
        return plan
    if n <= 0:
        return plan
    types = [t for t in TYPES if weights.get(t, 0) > 0]
    type_counts = dict(zip(types, largest_remainder(n, [weights[t] for t in types])))
    linked = {row for row in usable if graph.linked(row)}
    if not linked:
        moved = sum(type_counts.get(t, 0) for t in _PAIRED)
        if moved:
            plan.notes.append(f"{moved} multi-hop/comparison item(s) written as single-hop: no two chunks are linked")
    buckets = _buckets(graph, usable, spread)
    bucket_counts = _bucket_counts(n, buckets)
    plan.quotas = {"types": type_counts, "spread": spread,
                   "buckets": {name: count for (name, _, _), count in zip(buckets, bucket_counts)}}
    slot_types = [t for t in types for _ in range(type_counts[t])]
    rng.shuffle(slot_types)
    slot_buckets: list[int] = []
    remaining = list(bucket_counts)
    while any(remaining):  # round robin over the buckets, so each gets a mix of types
        for b, left in enumerate(remaining):
            if left:
                slot_buckets.append(b)
                remaining[b] -= 1
    order = {row: rank for rank, row in enumerate(rng.sample(usable, len(usable)))}
    uses: dict[int, int] = {}
    pair_uses: set[tuple[int, int]] = set()
    combos: dict[tuple[str, tuple[int, ...]], int] = {}
    persona_order = rng.sample(list(personas), len(personas)) if personas else [None]
    style_order = rng.sample(list(styles), len(styles)) if styles else ["plain"]
    for index, (kind, b) in enumerate(zip(slot_types, slot_buckets), start=1):
        rows = buckets[b][1]
        planned = None
        if kind in _PAIRED:
            candidates = [r for r in rows if r in linked] or sorted(linked)
            if not candidates:
                planned, kind = kind, "single_hop"
        pool = candidates if kind in _PAIRED else rows
        row = min(pool, key=lambda r: (uses.get(r, 0), order.get(r, len(order))))
        uses[row] = uses.get(row, 0) + 1
        if kind in _PAIRED:
            partners = [other for other, _ in graph.linked(row)]
            fresh = [p for p in partners if (min(row, p), max(row, p)) not in pair_uses]
            partner = (fresh or partners)[0]
            pair_uses.add((min(row, partner), max(row, partner)))
            chosen = [row, partner]
        elif kind == "summary":
            chosen = _summary_rows(graph, row)
        else:
            chosen = [row]
        chunk = graph.chunks[row]
        combo = (kind, tuple(chosen))
        variant = combos.get(combo, 0)
        combos[combo] = variant + 1
        plan.items.append(ItemPlan(
            key=f"gen-{index:04d}", type=kind, chunk_ids=tuple(graph.chunks[r]["id"] for r in chosen),
            language=_language(graph, row), source=chunk["source"], topic=chunk["topic"],
            persona=persona_order[(index - 1) % len(persona_order)],
            style=style_order[(index - 1) % len(style_order)], planned_type=planned, variant=variant))
    return plan
