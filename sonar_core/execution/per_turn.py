"""Per-turn scoring (``per_turn: true`` on an evaluator's entry): each assistant turn of a conversation
scored as its own question and answer.

A conversation row becomes one row per assistant turn that says something, its question the user turn
before it (sonar_core.conversation.assistant_turns); the evaluator scores those rows as it scores any,
and each conversation row gets back, per metric, the mean over its turns as its value. The turns'
values and each metric's minimum stay in the row's details (``per_turn``, ``per_turn_min``), which the
evaluated dataset, the drill-down and the case pages show. A row without a conversation (or with no
assistant turn after a user turn) is scored whole, as without ``per_turn``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Sequence

from ..contract import Evaluator, Input, RowResult
from ..conversation import assistant_turns
from ..dataset import Row
from ..errors import ConfigError

__all__ = ["PerTurn", "check_per_turn", "TURN_INPUTS"]

#: What a turn row has: a question, an answer, and the conversation it came from.
TURN_INPUTS = frozenset({Input.QUESTION, Input.ACTUAL_ANSWER, Input.CONVERSATION})


def check_per_turn(label: str, needed: Iterable[Input]) -> None:
    """ConfigError when an evaluator needs an input that a single turn does not have."""
    extra = [n for n in needed if n not in TURN_INPUTS]
    if extra:
        raise ConfigError(f"evaluator '{label}': per_turn scores each assistant turn with the user turn before it, "
                          f"but this evaluator needs the {extra[0].label}, which a turn does not have")


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


class PerTurn:
    """An evaluator seen through its turns: :meth:`evaluate` takes conversation rows and returns one
    aggregated result per row (see the module docstring); the rest is the wrapped evaluator's."""

    def __init__(self, inner: Evaluator) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def evaluate(self, rows: Sequence[Row]) -> list[RowResult]:
        expanded: list[Row] = []
        spans: list[tuple[int, int, list[int] | None]] = []  # per row: its results' slice, its turn indices
        for row in rows:
            turns = assistant_turns(row.conversation)
            start = len(expanded)
            if not turns:
                expanded.append(row)
                spans.append((start, start + 1, None))
                continue
            for index, question, answer in turns:
                expanded.append(dataclasses.replace(row, key=f"{row.key}#turn{index}", input=question,
                                                    actual_output=answer))
            spans.append((start, len(expanded), [t[0] for t in turns]))
        results = list(self.inner.evaluate(expanded))
        if len(results) != len(expanded):
            raise RuntimeError(f"evaluator returned {len(results)} results for {len(expanded)} turns")
        return [results[start] if indices is None else _aggregate(results[start:end], indices)
                for start, end, indices in spans]


def _aggregate(turns: list[RowResult], indices: list[int]) -> RowResult:
    keys = list(dict.fromkeys(k for result in turns for k in result.values))
    values: dict[str, float | None] = {}
    minimum: dict[str, float | None] = {}
    for key in keys:
        got = [v for v in (r.values.get(key) for r in turns) if v is not None and not math.isnan(v)]
        values[key] = _mean(got)
        minimum[key] = min(got) if got else None
    per_turn = [{"turn": index, "values": dict(result.values), **({"message": result.error_message}
                                                                   if result.error_message else {})}
                for index, result in zip(indices, turns)]
    errors = [f"turn {i}: {r.error_message}" for i, r in zip(indices, turns) if r.error_message]
    return RowResult(values=values, details={"per_turn": per_turn, "per_turn_min": minimum},
                     error_message="; ".join(errors) or None)
