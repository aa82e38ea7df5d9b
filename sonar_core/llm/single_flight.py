"""Single-flight: identical requests (one cache key) in flight at once share one call and one outcome.

Without it, two rows whose prompts were identical (two models gave the same answer to a judge's
question) were asked as two calls when neither was cached yet; under faults one could exhaust its
retries while the other got an answer, and the run recorded two different verdicts for one prompt.
The first request of a key (the *leader*) makes the call; every identical request that arrives
while it is in flight waits for it and gets its outcome (marked ``shared``), an answer or a
failure alike. A request that comes after the call ended finds a success in the response cache;
after a failure (never cached) it is asked again, as a failed request always was.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import replace
from typing import Callable

from .requests import Completion

__all__ = ["SingleFlight"]


class SingleFlight:
    """Calls in flight by key; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[str, Future] = {}

    def run(self, key: str, call: Callable[[], Completion],
            again: Callable[[], Completion | None]) -> tuple[Completion, bool]:
        """The outcome for ``key`` and whether it was shared (answered by another request's call).

        ``call`` makes the call (the leader's); ``again`` looks for an answer a call that just ended
        left (the response cache), so a request that arrives after the leader finished does not call again.
        """
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = Future()
        if not leader:
            return flight.result(), True
        try:
            # An identical request's call may have ended (and cached its answer) since this one looked.
            found = again()
            outcome = found if found is not None else call()
        except BaseException as exc:
            with self._lock:
                del self._flights[key]
            flight.set_exception(exc)
            raise
        with self._lock:
            del self._flights[key]
        flight.set_result(outcome)
        return outcome, False

    @staticmethod
    def shared(outcome: Completion) -> Completion:
        """The leader's outcome as a follower gets it: the same text, error and metadata, no call of its own."""
        return replace(outcome, meta=dict(outcome.meta), shared=True, attempts=0)
