"""How a run ends when it is interrupted: Ctrl-C ends it whatever its threads are doing.

Two pieces, each used at one place:

* :class:`WorkerPool`: the host pipeline's threads. Left by an exception (Ctrl-C reaches the main
  thread while it waits for them), it hands out no more work, cancels the run's cost ledger (a
  call waiting on the budget wakes up, and no call starts any more) and does **not** wait for the
  calls in flight: the run goes on to record that it was interrupted at once.
* :func:`interrupt_guard`: pushed on the run's ``ExitStack``; when a run is left by Ctrl-C
  (``KeyboardInterrupt``, or :class:`~sonar_core.errors.RunInterrupted` raised for it), the ledger
  is cancelled and run.json says ``interrupted`` with the ``--resume`` command, before the
  services and the journal close. A run.json never stays ``running`` after Ctrl-C.

What is still in flight then (a model call, bounded by its own timeout) ends on its own; the CLI
does not wait for it (``cli.common.exit_now``).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from ..errors import RunInterrupted
from .record import write_run_json

__all__ = ["WorkerPool", "interrupt_guard", "INTERRUPTED"]

#: run.json's ``status`` of a run ended by Ctrl-C (docs/result-directory.md).
INTERRUPTED = "interrupted"


class WorkerPool:
    """A thread pool that, left by an exception, stops its work without waiting for it (module docstring)."""

    def __init__(self, workers: int, name: str, ledger: Any = None) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._ledger = ledger
        self._stops: list[Callable[[], None]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self._pool.submit(fn, *args)

    def on_stop(self, stop: Callable[[], None]) -> None:
        """Call ``stop`` (no more work handed out) when the pool is left by an exception."""
        self._stops.append(stop)

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self._pool.shutdown(wait=True)
            return
        for stop in self._stops:
            stop()
        if self._ledger is not None:
            self._ledger.cancel("run interrupted" if issubclass(kind, KeyboardInterrupt) else "run stopped")
        # Queued work is dropped and the calls in flight are not waited for: they end on their own.
        self._pool.shutdown(wait=False, cancel_futures=True)


def interrupt_guard(state: Any, journal: Any) -> Callable[..., bool]:
    """An ``ExitStack.push`` callback: a run left by Ctrl-C cancels its ledger and writes run.json as
    ``interrupted``, its ``error`` the ``--resume`` line; the exception goes on (returns False)."""

    def guard(kind, error, traceback) -> bool:
        if kind is None or not issubclass(kind, (KeyboardInterrupt, RunInterrupted)):
            return False
        if state.ledger is not None:
            state.ledger.cancel("run interrupted")
        if issubclass(kind, KeyboardInterrupt):  # RunInterrupted was journalled where it was raised
            journal.event("run interrupted", "Runner", "execute_run", finished=len(state.summaries))
        state.result.status = INTERRUPTED
        state.result.message = str(RunInterrupted(state.run_dir))
        try:
            write_run_json(state, status=INTERRUPTED)
        except OSError:
            pass  # a folder that cannot be written keeps the run.json it had; the interrupt goes on
        return False

    return guard
