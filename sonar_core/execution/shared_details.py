"""Equal row details held once.

A model-free evaluator's rows mostly carry the same ``details`` (no match found, nothing decoded, the same
check): at a million rows, a dict of a dozen keys and a few empty lists per row was the largest part of
a run's memory (issue 41: 0.75 KB a row for encoding_guardrail). Rows whose details are equal, value by
value and type by type, share the first such dict instead. Nothing reads details to change them once an
evaluator has returned them (the row cache, the findings and the writers only read), so sharing is safe.
"""

from __future__ import annotations

from typing import Any

from ..jsontypes import JsonObject

__all__ = ["DetailsPool"]

#: Distinct details remembered per evaluator: a model-free evaluator's million rows hold a handful, a
#: judge's are all different (then the pool is full after this many and costs only the key's making).
POOL_LIMIT = 4096


def _frozen(value: Any) -> Any:
    """A hashable stand-in for ``value`` that is equal only for equal JSON: each value keeps its type
    (1, 1.0 and True differ), floats compare by their text (0.0 and -0.0 differ, NaN equals NaN)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return kind, value
    if kind is float:
        return kind, repr(value)
    if kind is list:
        return kind, tuple(_frozen(item) for item in value)
    if kind is dict:
        return kind, tuple((key, _frozen(item)) for key, item in value.items())
    raise TypeError(f"not shared: {kind.__name__}")


class DetailsPool:
    """Hands back, for a row's details, the first equal details seen (or these, remembered)."""

    def __init__(self, limit: int = POOL_LIMIT) -> None:
        self._seen: dict[Any, JsonObject] = {}
        self._limit = limit
        self._misses = 0

    def share(self, details: JsonObject) -> JsonObject:
        if self._misses >= self._limit:  # all different so far (a judge's explanations): stop looking
            return details
        try:
            key = _frozen(details)
        except TypeError:  # a value of another type (a tuple, a numpy number): kept as it is
            return details
        found = self._seen.get(key)
        if found is not None:
            return found
        self._misses += 1
        self._seen[key] = details
        return details
