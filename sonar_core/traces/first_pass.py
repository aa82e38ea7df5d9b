"""The first pass shared among the worker processes.

The first pass (:func:`~.files.trace_ends`) reads every line for its trace ids before any trace can be
assembled; done by the loading process alone it left the workers idle for its whole length (about a tenth of a
million-span load). With workers, each plain JSON-lines file is cut into parts at line ends, one per worker
(files under :data:`_PART_BYTES` stay whole), and the workers scan the parts (:func:`scan_part`: the ids per line,
the line ranges they will map later, :mod:`.ranges`) while this process hashes the files (the dataset's
fingerprint). The parts' findings, put back in order and renumbered, are what the serial pass finds: the same
trace ends, the same ranges, the same unit count. Compressed, protobuf and whole-JSON files, and a line too long
to hold, leave it to the serial pass.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, NamedTuple

from .files import _NoDigest, _lines, _line_ids, ends_of, plain_lines
from .ranges import LineRange, RangeSink

__all__ = ["shared_first_pass", "scan_part", "PartScan"]

#: A file is cut into parts (one per worker) only from this size: below, one worker scans it whole.
_PART_BYTES = 8 * 2**20
_READ = 1 << 20


class PartScan(NamedTuple):
    """What a worker found in a part: lines and units in it, its line ranges and the last unit (numbered in the part,
    from 1) of each trace id as written; ``usable`` False when a line was too long to hold."""

    usable: bool
    lines: int
    units: int
    ranges: list[LineRange]
    last: dict[bytes, int]


class _Part:
    """``read`` of a file's bytes from where the handle stands, ``size`` of them at most."""

    def __init__(self, handle, size: int) -> None:
        self.handle, self.left = handle, size

    def read(self, size: int = -1) -> bytes:
        block = self.handle.read(min(self.left, size if size >= 0 else self.left))
        self.left -= len(block)
        return block


def scan_part(path: str, start: int, end: int) -> PartScan:
    """Bytes ``start`` to ``end`` of a JSON-lines file (cut at line ends), scanned as the first pass scans lines."""
    sink = RangeSink()
    sink.file(Path(path), True)
    last: dict[bytes, int] = {}
    lines = 0
    with open(path, "rb") as handle:
        handle.seek(start)
        offset = start
        for lines, line in _lines(_Part(handle, end - start), _NoDigest()):
            sink.line(lines, offset, line)
            if line is None:
                break
            offset += len(line)
            if line.strip():
                found = _line_ids(line)
                if found:
                    last.update(dict.fromkeys(found, sink.units))
    sink.finish()
    return PartScan(sink.usable, lines, sink.units, sink.ranges, last)


def _parts(path: Path, count: int) -> list[tuple[str, int, int]]:
    """``(path, start, end)``: ``path`` cut at line ends into up to ``count`` parts of about equal size."""
    size = path.stat().st_size
    cuts = [0]
    with open(path, "rb") as handle:
        for n in range(1, count if size >= _PART_BYTES else 1):
            at = max(size * n // count, cuts[-1])
            handle.seek(at)
            while True:  # the next line end at or after ``at``
                block = handle.read(_READ)
                if not block:
                    at = size
                    break
                found = block.find(b"\n")
                if found >= 0:
                    at += found + 1
                    break
                at += len(block)
            if cuts[-1] < at < size:
                cuts.append(at)
    cuts.append(size)
    return [(str(path), a, b) for a, b in zip(cuts, cuts[1:]) if b > a] or [(str(path), 0, 0)]


def shared_first_pass(files: list[Path], workers, sink: RangeSink) -> dict[str, int] | None:
    """The trace ends (as :func:`~.files.trace_ends` gives them), ``sink`` filled as the serial pass fills it; the
    parts scanned by ``workers`` (:class:`~.parallel.Workers`). None when a file is not plain JSON lines, or a
    line is too long: then nothing is filled and the serial pass does it all."""
    if not all(plain_lines(path) for path in files):
        return None
    try:
        futures = [(part, workers.submit(scan_part, *part)) for path in files for part in _parts(path, workers.count)]
        digest = hashlib.sha256()
        for path in files:  # while the workers scan: the bytes they read, hashed in the same order
            with open(path, "rb") as handle:
                while block := handle.read(_READ):
                    digest.update(block)
    except OSError:  # the serial pass says what cannot be read, in one line
        return None
    last: dict[Any, int] = {}
    ranges: list[LineRange] = []
    units = lines = 0
    previous = None
    for (path, _, _), future in futures:
        try:
            found: PartScan = future.result()
        except OSError:
            found = PartScan(False, 0, 0, [], {})
        if not found.usable:
            for _, rest in futures:
                rest.cancel()
            return None
        if path != previous:
            previous, lines = path, 0
        ranges += [r._replace(lines=r.lines + lines, units=r.units + units) for r in found.ranges]
        last.update({k: v + units for k, v in found.last.items()} if units else found.last)
        lines += found.lines
        units += found.units
    sink.ranges, sink.units, sink.digest = ranges, units, digest
    return ends_of(last)
