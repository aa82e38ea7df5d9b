"""Actors a Ray run shares across its workers: the cluster-wide limiter of one LLM, the cache reader.

:class:`ClusterLimiter` holds one LLM's (a judge's or a model under test's) ``max_concurrency``
and ``requests_per_minute`` for the whole cluster: every worker's client takes a slot from it
around each call (``LLMClient.gate``), so N workers together never have more calls in flight, or
start them faster, than one local run would. It is an asyncio actor: waiting callers cost no
thread. A worker killed while it holds a slot leaks that slot until the run ends (the run goes on
with one slot fewer).

:class:`CacheReader` runs on the driver's node and answers lookups in the driver's response cache,
so a worker is answered from the cache without a disk of its own; it never writes.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

__all__ = ["ClusterLimiter", "CacheReader"]


class ClusterLimiter:
    """``slots`` calls in flight at most, started no faster than ``per_minute`` (None: unpaced)."""

    def __init__(self, slots: int, per_minute: float | None) -> None:
        self.slots = max(1, int(slots))
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._semaphore: asyncio.Semaphore | None = None
        self._next = 0.0
        self.in_flight = 0
        self.high_water = 0

    async def acquire(self) -> None:
        if self._semaphore is None:  # made on the actor's own event loop
            self._semaphore = asyncio.Semaphore(self.slots)
        await self._semaphore.acquire()
        self.in_flight += 1
        self.high_water = max(self.high_water, self.in_flight)
        if self.interval:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            if start > now:
                await asyncio.sleep(start - now)

    async def release(self) -> None:
        if self._semaphore is not None:
            self.in_flight -= 1
            self._semaphore.release()

    async def stats(self) -> dict[str, Any]:
        return {"slots": self.slots, "in_flight": self.in_flight, "high_water": self.high_water}


class CacheReader:
    """Reads the driver's response cache for workers (the mode and ``fresh_since`` of the run apply)."""

    def __init__(self, path: str, mode: str, fresh_since: float | None) -> None:
        from ..llm.cache import ResponseCache

        self.cache = ResponseCache(Path(path), mode, fresh_since)  # type: ignore[arg-type]

    def get(self, key: str) -> str | None:
        return self.cache.get(key, count=False)
