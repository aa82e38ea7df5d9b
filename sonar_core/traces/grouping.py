"""Grouping items by a key (spans by trace id, traces by session id) in bounded memory.

Spans arrive in the order they end, a trace's root usually last and its children spread over many
export batches, so a trace is complete only once the whole input has been read. :class:`Grouper` keeps
up to ``limit`` items in memory; past that it spills them to bucket files (a hash of the key picks one
of :data:`BUCKETS`), then groups one bucket at a time and merges the buckets back into one stream.

The rule, whatever was spilled: groups come out in the order their first item went in (a trace where
its first span was read), each group's items in the order they went in. So a spilled run gives the
same groups, in the same order, as one held in memory (a test compares them). Memory is about
``limit`` items while reading, then one bucket (the spilled items / BUCKETS) at a time.
"""

from __future__ import annotations

import heapq
import pickle
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterator

__all__ = ["Grouper", "BUCKETS", "DEFAULT_LIMIT"]

BUCKETS = 64
#: Items held in memory before spilling (spans read through their convention: a few KB each).
DEFAULT_LIMIT = 100_000


class Grouper:
    """``add(key, item)`` for every item, then ``groups()`` once; use as a context manager (it removes
    its spill files)."""

    def __init__(self, spill_parent: Path | None, limit: int = DEFAULT_LIMIT, prefix: str = ".sonar-traces-") -> None:
        self.spill_parent = spill_parent
        self.limit = limit
        self.prefix = prefix
        self._memory: dict[str, list[Any]] = {}
        self._first: dict[str, int] = {}
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

    def add(self, key: str, item: Any) -> None:
        held = self._memory.get(key)
        if held is None:
            self._memory[key] = [item]
            self._first[key] = self._seq
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
        for key, items in self._memory.items():
            pickle.dump((self._first[key], key, items), self._buckets[_bucket(key)], protocol=pickle.HIGHEST_PROTOCOL)
        self.spilled += self._held
        self._memory, self._first, self._held = {}, {}, 0

    def groups(self) -> Iterator[tuple[str, list[Any]]]:
        """``(key, items)`` per key, in the order of each key's first item."""
        if self._folder is None:
            memory, self._memory, self._first = self._memory, {}, {}
            yield from memory.items()
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
                found[2].extend(items)
        handle.seek(0)
        handle.truncate()
        for record in sorted(merged.values(), key=lambda r: r[0]):
            pickle.dump(record, handle, protocol=pickle.HIGHEST_PROTOCOL)
        merged.clear()
        handle.flush()
        handle.seek(0)
        return handle

    @staticmethod
    def _read_run(handle) -> Iterator[list]:
        yield from _records(handle)


def _records(handle) -> Iterator[Any]:
    while True:
        try:
            yield pickle.load(handle)
        except EOFError:
            return


def _bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % BUCKETS
