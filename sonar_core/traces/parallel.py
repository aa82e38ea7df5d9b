"""Mapping units in worker processes: decoding JSON and reading spans through their conventions is most of a
load's work, needs no other unit, and so runs in ``workers`` processes while this one groups the spans.

:func:`mapped_units` hands over ``(events, spans read)`` per batch of units (:func:`~.mapping.map_units`), in
the order of the units whichever worker finished first: the events replayed in that order tell the loader
exactly what mapping the units here would have told it (same rows, same order, same counts and examples).

Workers are started (``spawn``: nothing of this process, its threads or its memory is inherited) when
``traces.workers`` is 2 or more, or by default (``auto``, :func:`worker_count`) when the span files hold at least
:data:`AUTO_BYTES` and this process may use two CPUs or more: then two workers, the count past which the loading
process itself is the bottleneck on a million spans (docs/traces.md, Speed and memory). A batch is a list of units
this process read (:func:`mapped_units`), or, for plain JSON-lines files, a range of lines the worker reads from the
file itself (:mod:`.ranges`; the first pass is then shared among the workers too, :mod:`.first_pass`). They cost
about 90 MB more memory and about 15% more CPU in all (the spans come back pickled), for a wall time about a third
shorter on two free CPUs. At most a few batches are in flight, so memory stays bounded; a worker that dies ends the
load with an error, and Ctrl-C (which the workers ignore) or any error stops them.
"""

from __future__ import annotations

import os
import signal
import sys
import types
from collections import deque
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import DatasetError
from .files import LINE
from .mapping import map_units
from .ranges import LineRange, range_units
from .spans import SpanInfo

__all__ = ["Workers", "mapped_units", "worker_count"]

#: A batch: units up to this many bytes of JSON (about 2,000 spans), sent to a worker at once (smaller batches
#: kept the 1,000,000-span bench under 1 GiB with two workers: docs/traces.md, Speed and memory).
_BATCH_BYTES = 2 * 2**20
_BATCH_UNITS = 256

_SETTINGS: tuple[int, tuple[str, ...], bool] = (0, (), False)


#: Seconds a worker has to finish its batch when the reading stops early.
_END_WITHIN = 10


#: ``auto`` maps in worker processes only when the span files hold at least this many bytes (about 60,000 spans of
#: OTLP JSON): below, starting the workers (about a second) costs more than they save.
AUTO_BYTES = 64 * 2**20
#: ``auto``'s workers, at most: the loading process's own share of the work (the first pass, grouping, rows) is
#: about a third of a load, so a third worker would wait for it.
AUTO_MOST = 2


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worker_count(setting: int | str | None, files: Iterable[Path] = ()) -> int:
    """The worker processes to map with (0: map in this process). ``setting``: ``traces.workers``, a count or
    ``auto`` (None: ``auto``); ``files``: the span files, whose size ``auto`` looks at."""
    if setting is None or setting == "auto":
        if usable_cpus() < 2:
            return 0
        size = 0
        for path in files:
            try:
                size += path.stat().st_size
            except OSError:
                pass
        return min(usable_cpus(), AUTO_MOST) if size >= AUTO_BYTES else 0
    return setting if setting >= 2 else 0


def _start(limit: int, filter_keys: tuple[str, ...], slim_llm: bool) -> None:
    global _SETTINGS
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the loading process's to handle
    _SETTINGS = (limit, filter_keys, slim_llm)


#: A span travels back as a plain tuple of its fields: a named tuple is pickled through a Python call each way,
#: a plain tuple by pickle's C code alone (a third less time to send, a third less to receive). The other events
#: (:mod:`.mapping`) are ints, strings and 4-tuples, never of this length.
_SPAN_FIELDS = len(SpanInfo._fields)
_tuple_new = tuple.__new__


def _map(batch: list | LineRange) -> tuple[list[Any], int]:
    """A batch's events, each span a plain tuple; a batch is a list of units, or a range of a file to read here."""
    units = range_units(batch) if type(batch) is LineRange else batch
    events, read = map_units(units, *_SETTINGS)
    return [tuple(event) if type(event) is SpanInfo else event for event in events], read


def _received(mapped: tuple[list[Any], int]) -> tuple[list[Any], int]:
    """A worker's events with its spans as :class:`~.spans.SpanInfo` again."""
    events, read = mapped
    return [_tuple_new(SpanInfo, event) if type(event) is tuple and len(event) == _SPAN_FIELDS else event
            for event in events], read


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


class Workers:
    """The worker processes of one load (``spawn``ed at the first task), a context manager: on leaving it the
    tasks not started are cancelled and the workers end (see :meth:`__exit__`)."""

    def __init__(self, count: int, spec, filter_keys: tuple[str, ...]) -> None:
        import multiprocessing

        self.count = count
        self._pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"), initializer=_start,
                                         initargs=(spec.max_attribute_chars, filter_keys, spec.scope != "span"))

    def __enter__(self) -> "Workers":
        return self

    def submit(self, function, *args: Any):
        """A future of ``function(*args)`` run by a worker."""
        with _blank_main():  # a submit may start a worker
            return self._pool.submit(function, *args)

    def ordered(self, batches: Iterable[list | LineRange]) -> Iterator[tuple[list[Any], int]]:
        """Each batch's events (:func:`_map`), in order; a few batches in flight, so memory stays bounded."""
        pending: deque = deque()
        try:
            for batch in batches:
                pending.append(self.submit(_map, batch))
                if len(pending) > self.count:
                    yield _received(pending.popleft().result())
            while pending:
                yield _received(pending.popleft().result())
        except BrokenProcessPool:
            raise DatasetError("a process mapping spans ended abruptly (out of memory?): set traces.workers: 1 "
                               "(--trace-workers 1) to map them in the run's own process") from None

    def __exit__(self, kind: type | None, *rest: object) -> None:
        finished = kind is None
        pool = self._pool
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


def mapped_units(units: Iterable[tuple], spec, filter_keys: tuple[str, ...],
                 workers: Workers | None) -> Iterator[tuple[list[Any], int]]:
    """``(events, spans read)`` of ``units`` (:func:`~.files.read_units`), batch by batch, in order, mapped by
    ``workers`` (None: here)."""
    if workers is None:
        settings = (spec.max_attribute_chars, filter_keys, spec.scope != "span")
        for unit in units:
            yield map_units((unit,), *settings)
        return
    yield from workers.ordered(_batches(units))
