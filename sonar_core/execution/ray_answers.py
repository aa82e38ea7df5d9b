"""Answers a Ray worker obtains, written by the driver as they arrive rather than when their shard returns.

A local run commits every host and judge answer to the response cache the moment it arrives
(:class:`~sonar_core.llm.cache.ResponseCache`), so a run killed mid-batch and resumed asks again
only the calls that were in flight. On Ray the driver is the only writer of the cache, and it used
to receive a shard's answers only with the shard's results: a kill re-asked every answer of the
shards still running (71 of them in the measurement of issue 35, against 1 locally).

Now a worker's cache (:class:`ShippedCache`) sends each new answer to the run's
:class:`AnswerInbox`, an asyncio actor on the driver's node, as soon as the client has it. The
driver's :class:`AnswerSink` thread waits on the inbox (a long poll: it is answered as soon as
something arrives) and writes each answer to the response cache at once. A kill of the driver then
loses only the calls in flight and the answers on their way to it, as a local run does.

A shard returns only once the inbox holds every answer it sent (:meth:`ShippedCache.settle`), and
:meth:`AnswerSink.flush` is the barrier the executor passes before it absorbs a shard: every answer
sent before the shard returned is in the cache by then, so what a run writes after a shard (its
results, ``cache info``, the keys ``sonar pack`` keeps) sees the same cache as before.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

__all__ = ["AnswerInbox", "AnswerSink", "ShippedCache"]

#: Seconds one long poll of the inbox waits for an answer before it returns empty.
POLL_SECONDS = 0.5
#: Seconds :meth:`AnswerSink.flush` waits for the sink to write what the inbox holds.
FLUSH_SECONDS = 120.0


class AnswerInbox:
    """The run's answers on their way to the driver: ``(key, llm, request, response, kind)`` entries,
    the arguments of :meth:`ResponseCache.put`, in the order they arrived."""

    def __init__(self) -> None:
        self._entries: list[tuple] = []
        self._received = 0
        self._arrived: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._arrived is None:  # made on the actor's own event loop
            self._arrived = asyncio.Event()
        return self._arrived

    async def put(self, entry: tuple) -> int:
        """Keep one answer; returns how many the inbox has received in all."""
        self._entries.append(entry)
        self._received += 1
        self._event().set()
        return self._received

    async def take(self, wait: float = POLL_SECONDS) -> list[tuple]:
        """Every answer not taken yet, waiting up to ``wait`` seconds for one when there is none."""
        if not self._entries:
            try:
                await asyncio.wait_for(self._event().wait(), wait)
            except asyncio.TimeoutError:
                pass
        entries, self._entries = self._entries, []
        self._event().clear()
        return entries

    async def received(self) -> int:
        """How many answers were put so far (taken or not)."""
        return self._received


class AnswerSink:
    """The driver's thread that takes the inbox's answers and hands each to ``write`` (the cache's ``put``)."""

    def __init__(self, ray: Any, inbox: Any, write: Callable[..., None]) -> None:
        self.ray = ray
        self.inbox = inbox
        self.write = write
        self._written = 0
        self._error: BaseException | None = None
        self._stopping = False
        self._done = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="ray-answer-sink", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping:
            try:
                entries = self.ray.get(self.inbox.take.remote(POLL_SECONDS))
                for entry in entries:
                    self.write(*entry)
            except BaseException as exc:  # a cache that cannot be written, or the inbox gone: said at the next flush
                with self._done:
                    self._error = exc
                    self._done.notify_all()
                return
            with self._done:
                self._written += len(entries)
                self._done.notify_all()

    def flush(self, timeout: float = FLUSH_SECONDS) -> None:
        """Return once every answer put into the inbox so far is written; raise what kept the sink from it."""
        target = self.ray.get(self.inbox.received.remote())
        with self._done:
            self._done.wait_for(lambda: self._written >= target or self._error is not None
                                or not self._thread.is_alive(), timeout)
            if self._error is not None:
                raise self._error
            if self._written < target:
                raise TimeoutError(f"{target - self._written} answers of the Ray workers were not written to the "
                                   f"response cache within {timeout:.0f} s")

    def close(self, timeout: float = 30.0) -> None:
        """Write what arrived (the last answers of an interrupted run too), then stop the thread."""
        try:
            if self._thread.is_alive():
                self.flush(timeout)
        finally:
            self._stopping = True
            self._thread.join(POLL_SECONDS + 5)


class ShippedCache:
    """A worker's response cache: reads through the driver's cache reader, sends its writes to the driver.

    It has the :class:`~sonar_core.llm.cache.ResponseCache` methods the clients use. Each new answer
    is sent to the run's inbox at once, without waiting for the inbox (the call's thread goes on to
    its next call); :meth:`settle` waits until the inbox holds every answer sent, and the shard does
    not return before it has. Without an inbox (a direct call outside a run), or once the inbox is
    gone (the run is closing), an answer is kept in ``writes`` and handed back with the shard's
    results. Row results are the driver's business (it answers rows from the row cache before
    dispatching), so a worker neither reads nor writes them.
    """

    def __init__(self, reader: Any, mode: str, inbox: Any = None) -> None:
        self.reader = reader
        self.mode = mode
        self.inbox = inbox
        self.path = "<driver>"
        self.writes: list[tuple] = []
        #: (the inbox's reply, the answer) per answer sent and not settled yet.
        self._sent: list[tuple[Any, tuple]] = []
        self._new: dict[str, str] = {}
        self.hits: dict[str, int] = {}
        self.start_count = 0

    @property
    def reads(self) -> bool:
        return self.mode != "off"

    def get(self, key: str, kind: str = "annotator", count: bool = True) -> str | None:
        import ray

        found = self._new.get(key)
        if found is None and self.reader is not None:
            found = ray.get(self.reader.get.remote(key))
        if found is not None and count:
            self.hits[kind] = self.hits.get(kind, 0) + 1
        return found

    def put(self, key: str, llm: str, request: dict[str, Any], response: str, kind: str = "annotator") -> None:
        self._new[key] = response  # this worker reads it back before the driver has written it
        entry = (key, llm, request, response, kind)
        if self.inbox is None:
            self.writes.append(entry)
        else:
            self._sent.append((self.inbox.put.remote(entry), entry))  # list.append: safe from the client's threads

    def settle(self) -> None:
        """Return once the inbox holds every answer sent; one it could not take goes to ``writes``."""
        import ray

        sent, self._sent = self._sent, []
        for reply, entry in sent:
            try:
                ray.get(reply)
            except ray.exceptions.RayError:  # the inbox is gone: the answer goes back with the shard, as before
                self.writes.append(entry)

    def get_row(self, key: str) -> str | None:
        return None

    def put_row(self, key: str, evaluator: str, result: str) -> None:
        return None

    def count(self) -> int:
        return 0

    def info(self) -> list[dict[str, Any]]:
        return []  # the driver's cache journals the run's counters

    def close(self) -> None:
        return None
