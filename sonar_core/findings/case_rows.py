"""Which rows the drill-down shows for one evaluator, with their values and what to say about each.

Which test cases: all of them up to :data:`~.types.CASE_LIMIT`; beyond that the first
:data:`~.types.CASE_LIMIT` keys in alphabetical order (:func:`selected_case_keys`). That choice
depends on nothing but the keys, so each evaluator picks its rows alone and the picks agree: a case
among the first keys of the dataset is among the first keys of any subset that holds it.
:func:`case_rows` keeps each chosen row's finite values and its message (the evaluator's error
message, else for a row failing the primary metric its details; a per-turn row says its turns);
:func:`sonar_core.artifacts.drilldown.evaluator_rows` writes them into ``evaluator_summary.json``.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Iterable

from .scored import ScoredEvaluator
from .types import CASE_LIMIT, CaseRow, CaseRows
from .wording import row_why, turn_summary

__all__ = ["CASE_LIMIT", "case_rows", "selected_case_keys"]


def selected_case_keys(keys: Iterable[str], limit: int | None = None) -> set[str]:
    """The test case keys the drill-down shows: all, or the first ``limit`` in alphabetical order.

    ``limit`` defaults to :data:`CASE_LIMIT`. Alphabetical order (of the keys' code points)
    costs a few milliseconds for 50,000 keys and keeps a perturbed copy such as
    ``fact-x--typos`` next to its original ``fact-x``.
    """
    limit = CASE_LIMIT if limit is None else limit
    unique = set(keys)
    if len(unique) <= limit:
        return unique
    return set(heapq.nsmallest(limit, unique))


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _turns(result: Any, metric: str) -> tuple[tuple[int, float | None], ...] | None:
    """``((turn index, value of metric), ...)`` of a row scored turn by turn, else None."""
    turns = result.details.get("per_turn") if isinstance(result.details, dict) else None
    return tuple((t["turn"], t["values"].get(metric)) for t in turns) if turns else None


def case_rows(ev: ScoredEvaluator) -> CaseRows:
    """The drill-down's rows of ``ev``: those of the chosen test cases, in dataset order."""
    cases = {row.test_case_key for row, _ in ev.scored} | {s.row.test_case_key for s in ev.skipped}
    chosen = selected_case_keys(cases)
    primary = ev.primary
    rows, turns = [], {}
    for row, result in ev.scored:
        if row.test_case_key not in chosen:
            continue
        values = tuple(_finite(result.values.get(m.key)) for m in ev.cls.metrics)
        why = result.error_message or (row_why(result) if ev.metric_fails(primary, result.values.get(primary.key)) else "")
        why = turn_summary(result, primary.key) or why  # a per-turn row says its turns
        rows.append(CaseRow(row.key, values, why))
        per_turn = _turns(result, primary.key)
        if per_turn:
            turns[row.key] = per_turn
    skipped = tuple((s.row.key, s.missing.value) for s in ev.skipped if s.row.test_case_key in chosen)
    return CaseRows(test_cases=len(cases), rows=tuple(rows), skipped=skipped, turns=turns)
