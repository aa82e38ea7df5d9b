"""Adaptive concurrency: an in-flight limit that halves on a 429 and grows back by one (AIMD).

A fixed ``max_concurrency`` either leaves a provider's capacity unused or storms it with 429s.
With ``adaptive_concurrency: true`` (the default) a configuration's in-flight limit follows the
additive-increase / multiplicative-decrease rule TCP uses for its congestion window:

* it starts at ``max_concurrency`` (the ceiling: it never goes above it);
* a call answered with a 429 halves it (rounding down, never below 1): **once per overload**. Every
  halving starts a new *window*; a 429 from a call that was started before the latest halving
  belongs to the overload that halving already answered, and changes nothing. So a burst of n
  simultaneous 429s from one overload halves the limit once, not n times; a 429 from a call
  started at the lowered limit halves it again;
* after ``limit`` successes in a row (as many as the limit allows in flight: about one round trip
  of calls at that limit) it grows by one. A 429 starts the count again.

Other failures (timeouts, 5xx, malformed bodies) change nothing: they say nothing about how many
calls the endpoint takes at once. :class:`AIMDRule` is the rule alone (no clock, no lock: the same
calls give the same limits); :class:`AdaptiveLimit` is the thread-safe bound an
:class:`~sonar_core.llm.client.LLMClient` holds around each call, and the Ray executor's cluster-wide
limiter (:mod:`sonar_core.execution.ray_limiter`) applies the same rule for all its workers.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

__all__ = ["AIMDRule", "AdaptiveLimit", "LimitChange", "RATE_LIMITED", "SUCCEEDED", "outcome_of"]

#: A call's outcome as the rule sees it: answered, or refused with a 429; None for anything else.
SUCCEEDED = "success"
RATE_LIMITED = "rate_limited"


def outcome_of(error: BaseException | None) -> str | None:
    """The outcome of a call that raised ``error`` (None: it returned)."""
    if error is None:
        return SUCCEEDED
    # A backend's TransientError of kind "rate_limit" is a 429 (backends.py, hosts/rag_http.py).
    return RATE_LIMITED if getattr(error, "kind", None) == "rate_limit" else None


@dataclass(frozen=True)
class LimitChange:
    """One change of the limit: ``start`` -> ``to``, and why (``429`` or ``N successes``)."""

    start: int
    to: int
    reason: str

    def fields(self) -> dict[str, object]:
        """The journal's fields (``from``, ``to``, ``reason``)."""
        return {"from": self.start, "to": self.to, "reason": self.reason}


class AIMDRule:
    """The limit and the rule that moves it (module docstring); not thread-safe by itself."""

    def __init__(self, ceiling: int, start: int | None = None) -> None:
        self.ceiling = max(1, int(ceiling))
        self.limit = min(self.ceiling, max(1, int(start))) if start is not None else self.ceiling
        #: How many halvings so far: the window a call started in (a 429 from an older one is stale).
        self.window = 0
        self.streak = 0
        #: The lowest and highest limit used once the limit first changed (None: it never changed).
        self.low: int | None = None
        self.high: int | None = None

    def record(self, window: int, outcome: str | None) -> LimitChange | None:
        """A call started in ``window`` ended with ``outcome``: the change it causes, if any."""
        if outcome == RATE_LIMITED:
            self.streak = 0
            if window != self.window or self.limit == 1:
                return None
            self.window += 1
            return self._move(self.limit // 2, "429")
        if outcome == SUCCEEDED:
            self.streak += 1
            if self.streak < self.limit or self.limit >= self.ceiling:
                return None
            self.streak = 0
            return self._move(self.limit + 1, f"{self.limit} successes")
        return None

    def _move(self, to: int, reason: str) -> LimitChange:
        change = LimitChange(self.limit, to, reason)
        self.limit = to
        self.low = min(change.start, to) if self.low is None else min(self.low, to)
        self.high = max(change.start, to) if self.high is None else max(self.high, to)
        return change


class AdaptiveLimit:
    """At most ``limit`` calls in flight, the limit moved by :class:`AIMDRule` when ``adaptive``.

    With ``adaptive=False`` it is a fixed bound of ``ceiling`` (a bounded semaphore). ``on_change`` is
    called with each :class:`LimitChange` under the lock, so that changes are journaled in the order they
    happened (it must not wait for a slot of this limit).
    """

    def __init__(self, ceiling: int, *, adaptive: bool = True,
                 on_change: Callable[[LimitChange], None] | None = None) -> None:
        self.rule = AIMDRule(ceiling)
        self.adaptive = adaptive
        self.on_change = on_change
        self.in_flight = 0
        self._condition = threading.Condition()

    @property
    def limit(self) -> int:
        return self.rule.limit

    def acquire(self) -> int:
        """Wait for a slot; returns the window the call starts in (give it back to :meth:`release`)."""
        with self._condition:
            while self.in_flight >= self.rule.limit:
                self._condition.wait()
            self.in_flight += 1
            return self.rule.window

    def release(self, window: int, outcome: str | None = None) -> LimitChange | None:
        """Give the slot back; ``outcome`` (:func:`outcome_of`) moves the limit when adaptive."""
        with self._condition:
            self.in_flight -= 1
            change = self.rule.record(window, outcome) if self.adaptive else None
            if change is not None and self.on_change is not None:
                self.on_change(change)
            # A grown limit may let several waiting calls go; a released slot lets one.
            self._condition.notify_all() if change is not None else self._condition.notify()
        return change

    @contextmanager
    def slot(self, report: bool = True) -> Iterator[None]:
        """Hold a slot around one call; its outcome moves the limit unless ``report`` is False (another
        limiter, the Ray executor's, adapts for it)."""
        window = self.acquire()
        try:
            yield
        except BaseException as exc:
            self.release(window, outcome_of(exc) if report else None)
            raise
        self.release(window, outcome_of(None) if report else None)
