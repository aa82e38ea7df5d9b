"""Grouping items by a key (spans by trace id, traces by session id) in bounded memory.

Spans arrive in the order they end, a trace's root usually last and its children spread over many
export batches. Two tools:

* :class:`TraceAssembler` holds the traces in flight and hands each over as soon as the line (or
  message) holding its last span has been read, which a first, light pass over the files found
  (:func:`~.files.trace_ends`): memory is the traces in flight, not the file. Should more than ``limit``
  spans be in flight at once (spans of one trace scattered over the whole file), the traces still open
  go to a :class:`Grouper` and come out at the end.
* :class:`Grouper` keeps up to ``limit`` items in memory; past that it spills them to bucket files (a
  hash of the key picks one of :data:`BUCKETS`), then groups one bucket at a time and merges the buckets
  back into one stream.

The order, whatever was spilled: groups come out by their ``order`` (a trace: the number of the line
holding its last span, so traces in the order they complete; a session: its first trace's), ties by
the order their first item went in; each group's items in the order they went in. So a spilled run
gives the same groups, in the same order, as one held in memory (a test compares them).
"""

from __future__ import annotations

import heapq
import pickle
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterator

__all__ = ["Grouper", "TraceAssembler", "BUCKETS", "DEFAULT_LIMIT"]

BUCKETS = 64
#: Items held in memory before spilling (spans read through their convention: a few KB each).
DEFAULT_LIMIT = 100_000
#: Records per pickle in a bucket's sorted run: the merge holds one such slice per bucket.
_RUN_SLICE = 256


class Grouper:
    """``add(key, item)`` for every item, then ``groups()`` once; use as a context manager (it removes
    its spill files)."""

    def __init__(self, spill_parent: Path | None, limit: int = DEFAULT_LIMIT, prefix: str = ".sonar-traces-") -> None:
        self.spill_parent = spill_parent
        self.limit = limit
        self.prefix = prefix
        self._memory: dict[str, list[Any]] = {}
        self._first: dict[str, tuple[int, int]] = {}  # key -> (order, first seq)
        self._held = 0
        self._seq = 0
        self._folder: Path | None = None
        self._buckets: list[Any] = []
        self.spilled = 0

    def __enter__(self) -> "Grouper":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for handle in self._buckets:
            handle.close()
        self._buckets = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def add(self, key: str, item: Any, order: int | None = None) -> None:
        """Add ``item`` to group ``key``; ``order`` (the same for every item of a group) places the group among
        the others, default: where its first item went in."""
        held = self._memory.get(key)
        if held is None:
            self._memory[key] = [item]
            self._first[key] = (self._seq if order is None else order, self._seq)
        else:
            held.append(item)
        self._seq += 1
        self._held += 1
        if self._held >= self.limit and self.spill_parent is not None:
            self._spill()

    def _spill(self) -> None:
        """Every held group to its bucket file as one record ``(first seq, key, items)``."""
        if self._folder is None:
            self.spill_parent.mkdir(parents=True, exist_ok=True)
            self._folder = Path(tempfile.mkdtemp(prefix=self.prefix, dir=self.spill_parent))
            self._buckets = [open(self._folder / f"bucket-{n:02d}.pkl", "w+b") for n in range(BUCKETS)]
        # One pickle per bucket and spill (a list of records), not one per group: pickle's C code then does the
        # whole list, where a call per group cost more than the pickling itself.
        shares: list[list] = [[] for _ in range(BUCKETS)]
        first = self._first
        for key, items in self._memory.items():
            shares[_bucket(key)].append((first[key], key, items))
        for handle, share in zip(self._buckets, shares):
            if share:
                pickle.dump(share, handle, protocol=pickle.HIGHEST_PROTOCOL)
        self.spilled += self._held
        self._memory, self._first, self._held = {}, {}, 0

    def groups(self) -> Iterator[tuple[str, list[Any]]]:
        """``(key, items)`` per key, by order (then by each key's first item)."""
        if self._folder is None:
            memory, first, self._memory, self._first = self._memory, self._first, {}, {}
            for key in sorted(memory, key=first.__getitem__):
                yield key, memory[key]
            return
        if self._held:
            self._spill()
        runs = [self._sorted_run(n) for n in range(BUCKETS)]
        for _, key, items in heapq.merge(*(self._read_run(handle) for handle in runs), key=lambda r: r[0]):
            yield key, items

    def _sorted_run(self, n: int):
        """Bucket ``n``'s records merged per key and written back sorted by first seq (a file handle)."""
        handle = self._buckets[n]
        handle.flush()
        handle.seek(0)
        merged: dict[str, list] = {}
        for first, key, items in _records(handle):
            found = merged.get(key)
            if found is None:
                merged[key] = [first, key, items]
            else:
                found[0] = min(found[0], first)
                found[2].extend(items)
        handle.seek(0)
        handle.truncate()
        ordered = sorted(merged.values(), key=lambda r: r[0])
        merged.clear()
        for start in range(0, len(ordered), _RUN_SLICE):  # read back a slice at a time: memory stays bounded
            pickle.dump(ordered[start:start + _RUN_SLICE], handle, protocol=pickle.HIGHEST_PROTOCOL)
        del ordered
        handle.flush()
        handle.seek(0)
        return handle

    @staticmethod
    def _read_run(handle) -> Iterator[list]:
        yield from _records(handle)


def _records(handle) -> Iterator[Any]:
    """The records of a bucket file, written as lists of records."""
    while True:
        try:
            share = pickle.load(handle)
        except EOFError:
            return
        yield from share


def _bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % BUCKETS


class TraceAssembler:
    """Spans to whole traces as soon as each completes (see the module docstring); a context manager.

    For each span, in order: :meth:`advance` to its unit when the unit changed (it hands over the traces that
    completed in the unit before), then :meth:`add`; after the last span, :meth:`rest`."""

    def __init__(self, ends: dict[str, int], spill_parent: Path | None, limit: int = DEFAULT_LIMIT) -> None:
        self.ends = ends
        self.limit = limit
        self._open: dict[str, tuple[int, list[Any]]] = {}  # trace id -> (first seq, spans)
        self._held = 0
        self._seq = 0
        #: The unit (line or message) the spans now come from.
        self.unit = 0
        self._done: set[str] = set()  # traces whose last unit is this one
        self._overflow = Grouper(spill_parent, limit)
        self.overflowed = False

    def __enter__(self) -> "TraceAssembler":
        return self

    def __exit__(self, *exc: object) -> None:
        self._overflow.close()

    def _end(self, trace_id: str) -> int:
        # A trace the first pass did not see (a file that grew since) completes at the end.
        return self.ends.get(trace_id, _UNSEEN)

    def advance(self, unit: int) -> Iterator[tuple[str, list[Any]]]:
        """The spans now come from ``unit``: yields the traces that completed in the unit before."""
        yield from self._complete()
        self.unit = unit

    def add(self, trace_id: str, unit: int, span: Any) -> bool:
        """Take one span of the current unit; False (and the span is not kept) when its trace was already handed
        over: the first pass did not see this span."""
        end = self.ends.get(trace_id, _UNSEEN)
        if unit > end:
            return False
        self._seq += 1
        if self.overflowed:
            self._overflow.add(trace_id, span, end)
            return True
        found = self._open.get(trace_id)
        if found is None:
            self._open[trace_id] = (self._seq, [span])
        else:
            found[1].append(span)
        if end == unit:
            self._done.add(trace_id)
        self._held += 1
        if self._held > self.limit and self._overflow.spill_parent is not None:
            self.overflowed = True  # the traces in flight do not fit: they finish in the Grouper
            for key, (_, spans) in sorted(self._open.items(), key=lambda kv: kv[1][0]):
                for item in spans:
                    self._overflow.add(key, item, self._end(key))
            self._open, self._held, self._done = {}, 0, set()
        return True

    def _complete(self) -> Iterator[tuple[str, list[Any]]]:
        done, self._done = self._done, set()
        for key in sorted(done, key=lambda k: self._open[k][0]) if len(done) > 1 else done:
            _, spans = self._open.pop(key)
            self._held -= len(spans)
            yield key, spans

    def rest(self) -> Iterator[tuple[str, list[Any]]]:
        """After the last span: the traces still to hand over, in the same order."""
        yield from self._complete()
        for key in sorted(self._open, key=lambda k: (self._end(k), self._open[k][0])):
            yield key, self._open[key][1]
        self._open = {}
        yield from self._overflow.groups()


#: The end of a trace the first pass did not see: after every unit.
_UNSEEN = 1 << 62
