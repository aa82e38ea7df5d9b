"""Pacing LLM requests: a requests-per-minute limiter and the retry delay policy.

Both take their clock, sleep and random source as arguments, so tests check the exact waits
without waiting.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping

__all__ = ["RateLimiter", "RetryPolicy", "retry_after_seconds"]


class RateLimiter:
    """At most ``per_minute`` request starts per minute, spaced evenly (60 / per_minute s apart).

    Even spacing never bursts, so an endpoint that counts requests per second is as happy as one
    that counts per minute.
    """

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.interval = 60.0 / per_minute
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for this request's slot; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait


def retry_after_seconds(headers: Mapping[str, str] | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a response asks the client to wait: ``retry-after-ms``, else ``Retry-After``
    (seconds, possibly fractional, or an HTTP date); None when absent or unreadable."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now())
    except (TypeError, ValueError, IndexError):
        return None


@dataclass
class RetryPolicy:
    """How long to wait before retry number ``attempt`` (1 for the first retry).

    A server's ``Retry-After`` is honoured as given (up to ``max_retry_after``). Otherwise the
    wait is exponential with jitter: half of ``base * 2**(attempt-1)`` (capped at ``cap``) plus a
    random share of the other half, so clients that failed together do not retry together.
    """

    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 120.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.cap, self.base * 2 ** max(0, attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)
