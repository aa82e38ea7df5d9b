"""Byte ranges of span files that worker processes read for themselves.

With workers (:mod:`.parallel`), the loading process used to read every line a second time and send it down a
pipe to a worker: for a million spans, a gigabyte read, hashed, pickled and copied, a third of the loading
process's own work while the workers waited for it. The first pass (:func:`~.files.trace_ends`) reads every
line anyway, so it also notes where the lines are (a :class:`RangeSink`): consecutive lines of one file, up to
about :data:`RANGE_BYTES` or :data:`RANGE_UNITS` units, make a :class:`LineRange`, and a worker opens the file
and reads its range (:func:`range_units`), numbering its lines and units as :func:`~.files.read_units` would.
The bytes the first pass read are hashed there, once: the dataset's fingerprint is the same.

Only plain JSON-lines files are read so: a compressed, protobuf or whole-JSON file, or a line too long, and
the load reads its units itself as before (:attr:`RangeSink.usable`). Workers read the bytes the first pass
saw: a line appended to a file after it is not read (the old way read it, then skipped its spans as arriving
after their trace, or made rows of traces that had not begun when the load started).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator, NamedTuple

from ..errors import DatasetError
from .files import LINE

__all__ = ["LineRange", "RangeSink", "range_units", "RANGE_BYTES", "RANGE_UNITS"]

#: A range closes once it holds this many bytes (about 2,000 spans of OTLP JSON) or this many units: a worker's
#: batch, small enough that the batches in flight keep memory bounded (docs/traces.md, Speed and memory).
RANGE_BYTES = 2 * 2**20
RANGE_UNITS = 256


class LineRange(NamedTuple):
    """Consecutive lines of one file: bytes ``start`` to ``end``, after ``lines`` lines of the file and ``units``
    units of the whole read."""

    path: str
    start: int
    end: int
    lines: int
    units: int


class RangeSink:
    """Told of every line of the first pass (:func:`~.files.trace_ends`), it makes the ranges and hashes the bytes."""

    def __init__(self) -> None:
        self.ranges: list[LineRange] = []
        #: False when a file or a line cannot be read from a range (see the module docstring).
        self.usable = True
        #: Every byte of the files read, in order (the dataset's fingerprint).
        self.digest = hashlib.sha256()
        #: Units (non-blank lines) seen: ``tally.lines_read`` once read.
        self.units = 0
        self._path = ""
        self._open: list[int] | None = None  # [start, end, lines before, units before, units in it]

    def file(self, path: Path, by_lines: bool) -> None:
        """A file begins; ``by_lines``: a plain JSON-lines file, read line by line with its offsets."""
        self._close()
        self._path = str(path)
        if not by_lines:
            self.usable = False

    def line(self, number: int, offset: int, line: bytes | None) -> None:
        """Line ``number`` (from 1) of the current file, at byte ``offset``; None: a line too long to hold."""
        if line is None:
            self.usable = False
            return
        if not self.usable:
            return
        blank = not line.strip()
        if not blank:
            self.units += 1
        found = self._open
        if found is None:
            self._open = found = [offset, offset, number - 1, self.units - (not blank), 0]
        found[1] = offset + len(line)
        found[4] += not blank
        if found[1] - found[0] >= RANGE_BYTES or found[4] >= RANGE_UNITS:
            self._close()

    def finish(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._open is not None:
            start, end, lines, units, _ = self._open
            self.ranges.append(LineRange(self._path, start, end, lines, units))
            self._open = None


def range_units(span: LineRange) -> Iterator[tuple[int, str, str, bytes]]:
    """The units of a range as :func:`~.files.read_units` hands them over: ``(unit, where, "line", line)``."""
    path, start, end, number, unit = span
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(end - start)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    at, size = 0, len(data)
    while at < size:
        stop = data.find(b"\n", at)
        stop = size if stop < 0 else stop + 1
        line = data[at:stop]
        at = stop
        number += 1
        if line.strip():
            unit += 1
            yield unit, f"{path}: line {number}", LINE, line
