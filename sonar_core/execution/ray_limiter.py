"""Actors a Ray run shares across its workers: the cluster-wide limiter of one LLM, the cache reader.

:class:`ClusterLimiter` holds one LLM's (a judge's or a model under test's) ``max_concurrency``
and ``requests_per_minute`` for the whole cluster: every worker's client takes a slot from it
around each call (``LLMClient.gate``), so N workers together never have more calls in flight, or
start them faster, than one local run would. With ``adaptive`` (the configuration's
``adaptive_concurrency``) it applies the AIMD rule of :mod:`sonar_core.llm.adaptive` to the
cluster's limit: each worker reports how its call ended (a 429, an answer) when it gives the slot
back, and gets the change it caused, if any, to journal. It is an asyncio actor: waiting callers
cost no thread. A worker killed while it holds a slot leaks that slot until the run ends (the run
goes on with one slot fewer).

:class:`CacheReader` runs on the driver's node and answers lookups in the driver's response cache,
so a worker is answered from the cache without a disk of its own; it never writes.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ..llm.adaptive import AIMDRule

__all__ = ["ClusterLimiter", "CacheReader"]


class ClusterLimiter:
    """``slots`` calls in flight at most (the ceiling, when ``adaptive``), started no faster than
    ``per_minute`` (None: unpaced)."""

    def __init__(self, slots: int, per_minute: float | None, adaptive: bool = False) -> None:
        self.slots = max(1, int(slots))
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.rule = AIMDRule(self.slots)
        self.adaptive = adaptive
        self._condition: asyncio.Condition | None = None
        self._next = 0.0
        self.in_flight = 0
        self.high_water = 0

    async def acquire(self) -> int:
        """Wait for a slot; returns the window the call starts in (hand it back to :meth:`release`)."""
        if self._condition is None:  # made on the actor's own event loop
            self._condition = asyncio.Condition()
        async with self._condition:
            await self._condition.wait_for(lambda: self.in_flight < self.rule.limit)
            self.in_flight += 1
            window = self.rule.window
        self.high_water = max(self.high_water, self.in_flight)
        if self.interval:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            if start > now:
                await asyncio.sleep(start - now)
        return window

    async def release(self, window: int = 0, outcome: str | None = None) -> dict[str, Any] | None:
        """Give a slot back; a call's ``outcome`` (:func:`~sonar_core.llm.adaptive.outcome_of`) moves the
        limit when adaptive. Returns the change (``from``, ``to``, ``reason``) for the worker to journal."""
        if self._condition is None:
            return None
        async with self._condition:
            self.in_flight -= 1
            change = self.rule.record(window, outcome) if self.adaptive else None
            self._condition.notify_all()
        return None if change is None else change.fields()

    async def stats(self) -> dict[str, Any]:
        return {"slots": self.slots, "limit": self.rule.limit, "in_flight": self.in_flight,
                "high_water": self.high_water, "low": self.rule.low}


class CacheReader:
    """Reads the driver's response cache for workers (the mode and ``fresh_since`` of the run apply)."""

    def __init__(self, path: str, mode: str, fresh_since: float | None) -> None:
        from ..llm.cache import ResponseCache

        self.cache = ResponseCache(Path(path), mode, fresh_since)  # type: ignore[arg-type]

    def get(self, key: str) -> str | None:
        return self.cache.get(key, count=False)
