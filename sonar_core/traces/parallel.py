"""Mapping units in worker processes: decoding JSON and reading spans through their conventions is most of a
load's work, needs no other unit, and so runs in ``workers`` processes while this one groups the spans.

:func:`mapped_units` hands over ``(events, spans read)`` per batch of units (:func:`~.mapping.map_units`), in
the order of the units whichever worker finished first: the events replayed in that order tell the loader
exactly what mapping the units here would have told it (same rows, same order, same counts and examples).

Workers are started (``spawn``: nothing of this process, its threads or its memory is inherited) only when
``traces.workers`` is 2 or more. They are not the default: on Sonar's shared two-CPU machine they cost a third
more CPU (the spans go to the workers as JSON and come back pickled) and about 150 MB more memory, for a wall
time about a third shorter only where the CPUs are free (docs/traces.md, Speed and memory). At most a few
batches are in flight, so memory stays bounded; a worker that dies ends the load with an error, and Ctrl-C
(which the workers ignore) or any error stops them.
"""

from __future__ import annotations

import signal
import sys
import types
from collections import deque
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterable, Iterator

from ..errors import DatasetError
from .files import LINE
from .mapping import map_units

__all__ = ["mapped_units", "worker_count"]

#: A batch: units up to this many bytes of JSON (about 2,000 spans), sent to a worker at once (smaller batches
#: kept the 1,000,000-span bench under 1 GiB with two workers: docs/traces.md, Speed and memory).
_BATCH_BYTES = 2 * 2**20
_BATCH_UNITS = 256

_SETTINGS: tuple[int, tuple[str, ...], bool] = (0, (), False)


#: Seconds a worker has to finish its batch when the reading stops early.
_END_WITHIN = 10


def worker_count(setting: int | None) -> int:
    """The worker processes to map with (0: map in this process)."""
    return setting if setting is not None and setting >= 2 else 0


def _start(limit: int, filter_keys: tuple[str, ...], slim_llm: bool) -> None:
    global _SETTINGS
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the loading process's to handle
    _SETTINGS = (limit, filter_keys, slim_llm)


def _map(batch: list) -> tuple[list[Any], int]:
    return map_units(batch, *_SETTINGS)


@contextmanager
def _blank_main() -> Iterator[None]:
    """While workers start: a blank ``__main__``. A spawned process otherwise runs the parent's main script
    again (as ``__mp_main__``), and a script that loads traces outside ``if __name__ == "__main__":`` would
    start a load in every worker; the workers need nothing of it (they run this module's functions)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _batches(units: Iterable[tuple]) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    size = 0
    for unit in units:
        batch.append(unit)
        if unit[2] == LINE:
            size += len(unit[3])
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_UNITS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def mapped_units(units: Iterable[tuple], spec, filter_keys: tuple[str, ...],
                 workers: int | None) -> Iterator[tuple[list[Any], int]]:
    """``(events, spans read)`` of ``units`` (:func:`~.files.read_units`), batch by batch, in order."""
    settings = (spec.max_attribute_chars, filter_keys, spec.scope != "span")
    count = worker_count(workers)
    if count == 0:
        for unit in units:
            yield map_units((unit,), *settings)
        return
    import multiprocessing

    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"), initializer=_start,
                               initargs=settings)
    pending: deque = deque()
    finished = False
    try:
        for batch in _batches(units):
            with _blank_main():  # a submit may start a worker
                pending.append(pool.submit(_map, batch))
            if len(pending) > count:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        finished = True
    except BrokenProcessPool:
        raise DatasetError("a process mapping spans ended abruptly (out of memory?): set traces.workers: 1 "
                           "to map them in the run's own process") from None
    finally:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=finished, cancel_futures=True)
        if not finished:
            # Interrupted, or a failure: the batches not started are cancelled and each worker ends after the
            # batch it holds (a fraction of a second). Not terminated at once: a worker killed while it writes
            # its result leaves half a message in the pipe, and the pool's reader thread waits for the rest for
            # ever, so the process never exits. Killed only if it has not ended within the bound.
            for process in processes:
                process.join(timeout=_END_WITHIN)
                if process.is_alive():
                    process.kill()
