"""Span files: which files a ``traces:`` entry names, and their units (lines or messages), read in order.

* ``.jsonl`` / ``.ndjson`` / ``.json``: OTLP JSON, one ``ExportTraceServiceRequest`` per line, as the
  OpenTelemetry Collector's file exporter and ``sonar traces serve`` write them (a ``.json`` file
  holding one pretty-printed request, or a list of them, is read too);
* ``.pb`` / ``.binpb``: OTLP protobuf, each message preceded by its 4-byte big-endian length (the
  Collector's file exporter with ``format: proto``);
* any of them compressed as ``.gz``.

A folder stands for its span files, by name. :func:`read_units` hands over each unit as read, a JSON line
still undecoded (:mod:`.mapping` decodes it, possibly in another process); :func:`trace_ends` is the first,
light pass that finds where each trace ends. A line that is not JSON, not an OTLP request, or cut short
(the last line of a file still being written) is skipped and counted; so is a message that is not
protobuf. Memory stays bounded by the longest line (at most :data:`MAX_LINE_BYTES`).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from ..errors import DatasetError
from .spans import SpanSkip, Tally

__all__ = ["resolve_files", "read_units", "trace_ends", "ends_of", "plain_lines", "SPAN_SUFFIXES", "MAX_LINE_BYTES",
           "LINE", "LONG_LINE", "REQUEST", "MESSAGE", "BROKEN"]

SPAN_SUFFIXES = (".jsonl", ".ndjson", ".json", ".pb", ".binpb")
_PROTO = (".pb", ".binpb")
#: A longer line is skipped whole ("line too long"): it is read in pieces, never held.
MAX_LINE_BYTES = 128 * 2**20
#: A .json file up to this size is first tried as one JSON document.
_WHOLE_JSON_BYTES = 64 * 2**20
#: Bytes read at a time: lines are cut out of these blocks (a readline per line scanned each byte in Python's
#: buffered reader, a tenth of the first pass).
_CHUNK = 1 << 20

#: What a unit holds (:func:`read_units`): a JSON line (bytes, undecoded), a line past MAX_LINE_BYTES (None), a
#: decoded JSON request (a whole .json file's), a parsed protobuf message, or a unit that could not be read
#: (``(reason, detail)``).
LINE, LONG_LINE, REQUEST, MESSAGE, BROKEN = "line", "long", "request", "message", "broken"


def _kind(path: Path) -> str | None:
    """The span suffix of ``path`` (its ``.gz`` aside), or None."""
    name = path.name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    return next((suffix for suffix in SPAN_SUFFIXES if name.endswith(suffix)), None)


def resolve_files(entries: list[str], base_dir: str | None = None) -> list[Path]:
    """Every span file the entries name (a folder: its span files by name, hidden ones aside)."""
    found: list[Path] = []
    for entry in entries:
        path = Path(entry).expanduser()
        if not path.is_absolute() and base_dir:
            path = Path(base_dir) / path
        try:
            if path.is_dir():
                inside = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".") and _kind(p))
                if not inside:
                    raise DatasetError(f"{path}: no span files ({', '.join(SPAN_SUFFIXES)}, or .gz) in this folder")
                found += inside
            elif path.is_file():
                if _kind(path) is None:
                    raise DatasetError(f"{path}: unknown span file type (use {', '.join(SPAN_SUFFIXES)}, or .gz)")
                found.append(path)
            else:
                raise DatasetError(f"{path}: trace file not found")
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    return found


def _open(path: Path) -> BinaryIO:
    try:
        return gzip.open(path, "rb") if _gzipped(path) else open(path, "rb")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None


def read_units(files: list[Path], tally: Tally, digest) -> Iterator[tuple[int | None, str, str, Any]]:
    """``(unit, where, what, payload)`` per line or message of ``files``, in order: ``what`` is one of LINE,
    LONG_LINE, REQUEST, MESSAGE, BROKEN (above). ``unit`` numbers them from 1 as ``tally.lines_read`` counts them
    (blank lines are not units); a compressed file cut short gives a last ``(None, path, BROKEN, ...)``. Every
    byte read goes into ``digest``."""
    for path in files:
        tally.files.append(str(path))
        with _open(path) as handle:
            try:
                if _kind(path) in _PROTO:
                    yield from _proto_units(path, handle, tally, digest)
                else:
                    yield from _json_units(path, handle, tally, digest)
            except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
                yield None, str(path), BROKEN, ("truncated compressed file", str(exc)[:120])
            except OSError as exc:
                raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None


class _NoDigest:
    def update(self, data: bytes) -> None:
        pass


#: Any "traceId" (or "trace_id") with its text in a JSON line: every span's, and a link's too, which only
#: makes a trace wait longer. A span this misses (its key written with escapes) arrives after its trace was
#: handed over, and is skipped and counted ("span after its trace").
_TRACE_ID = re.compile(rb'"trace_?[iI]d"\s*:\s*"([^"\\]{1,64})"')
#: The key as OTLP JSON writers write it: when every candidate of the expression above is written so, a byte
#: search finds the same ids several times faster.
_PLAIN_KEY = b'"traceId":"'


def _line_ids(line: bytes) -> list[bytes]:
    """What ``_TRACE_ID.findall(line)`` finds, in order."""
    plain = line.count(_PLAIN_KEY)
    if plain != line.count(b'"traceId"') or b'"trace_' in line or b'"traceid"' in line:
        return _TRACE_ID.findall(line)
    found = []
    for part in line.split(_PLAIN_KEY)[1:] if plain else ():  # each id starts a part (half the time of a find loop)
        end = part.find(b'"', 0, 65)
        if end > 0 and part.find(b"\\", 0, end) < 0:  # else the expression does not match here
            found.append(part[:end])
    return found


def trace_ends(files: list[Path], sink=None) -> dict[str, int]:
    """A first, lighter pass: trace id -> the unit (line or message, as :func:`read_units` numbers them) that
    holds the trace's last span. Only ids are read: a JSON line is searched for them, not parsed. ``sink``: a
    :class:`~.ranges.RangeSink`, told of every file and line (where worker processes are to read the lines)."""
    last: dict[Any, int] = {}  # the ids as written -> the last unit holding one
    for unit, found in _id_units(files, sink):
        if found:
            last.update(dict.fromkeys(found, unit))
    return ends_of(last)


def ends_of(last: dict[Any, int]) -> dict[str, int]:
    """Trace id (normalised) -> last unit, from the ids as written (bytes or text) -> the last unit holding one."""
    from .otlp_json import normal_id

    ends: dict[str, int] = {}
    for raw, unit in last.items():
        try:
            key = normal_id(raw if isinstance(raw, str) else raw.decode("ascii", "replace"), 16, "traceId")
        except SpanSkip:
            continue
        if ends.get(key, 0) < unit:  # one trace written two ways (hex and base64): its later unit
            ends[key] = unit
    return ends


def plain_lines(path: Path) -> bool:
    """Whether ``path`` is read line by line from its bytes as they are (JSON lines, not compressed)."""
    return _by_lines(path) and not _gzipped(path)


def _gzipped(path: Path) -> bool:
    return path.name.lower().endswith(".gz")


def _by_lines(path: Path) -> bool:
    return not (_kind(path) in _PROTO or _is_whole_json(path))


def _id_units(files: list[Path], sink=None) -> Iterator[tuple[int, list]]:
    """``(unit, trace ids)`` numbered as :func:`read_units` numbers units (a JSON line that is not an object, or
    does not parse, is a unit too; so is a protobuf message, parsed for its ids)."""
    tally = Tally()
    for path in files:
        by_lines = _by_lines(path)
        if sink is not None:
            sink.file(path, by_lines and not _gzipped(path))  # plain_lines, without peeking at the file again
        if not by_lines:  # read as the second pass reads them
            for unit, _, what, payload in read_units([path], tally, _NoDigest()):
                if what == MESSAGE:
                    yield unit, _proto_trace_ids(payload)
                elif what == REQUEST:
                    yield unit, _TRACE_ID.findall(json.dumps(payload).encode())
            continue
        with _open(path) as handle:
            try:
                if sink is not None and sink.usable:
                    yield from _sunk_id_units(handle, sink, tally)
                    continue
                for _, line in _lines(handle, _NoDigest()):
                    if line is not None and not line.strip():
                        continue
                    tally.lines_read += 1
                    yield tally.lines_read, _line_ids(line) if line is not None else []
            except (EOFError, gzip.BadGzipFile, zlib.error):
                if sink is not None:
                    sink.usable = False
                continue
    if sink is not None:
        sink.finish()


def _sunk_id_units(handle: BinaryIO, sink, tally: Tally) -> Iterator[tuple[int, list]]:
    """:func:`_id_units` of one JSON-lines file, telling ``sink`` of each line and hashing its bytes."""
    offset = 0
    for number, line in _lines(handle, sink.digest):
        sink.line(number, offset, line)
        if line is None:  # too long: the file is read the old way (the offsets past it are not known)
            tally.lines_read += 1
            yield tally.lines_read, []
            continue
        offset += len(line)
        if not line.strip():
            continue
        tally.lines_read += 1
        yield tally.lines_read, _line_ids(line)


def _is_whole_json(path: Path) -> bool:
    """Whether a .json file holds one JSON document (not JSON lines, as the Collector writes into .json too)."""
    if _kind(path) != ".json":
        return False
    try:
        with _open(path) as handle:
            return _whole_json(handle, _NoDigest()) is not None
    except (OSError, DatasetError, EOFError, zlib.error):
        return False


def _proto_trace_ids(request) -> list[str]:
    return [span.trace_id.hex() for group in request.resource_spans for scope in group.scope_spans
            for span in scope.spans if len(span.trace_id) == 16]


def _lines(handle: BinaryIO, digest) -> Iterator[tuple[int, bytes | None]]:
    """``(number, line)`` from 1, each line with its ``\\n`` (the last may have none); a line of more than
    MAX_LINE_BYTES comes as ``(number, None)`` after being read through, never held."""
    read = getattr(handle, "read1", handle.read)  # read1: a cut .gz gives up the lines before the cut first
    number = 0
    held: list[bytes] = []  # the start of a line cut by the end of a block
    size = 0  # its length; -1 while reading through a line too long
    while True:
        block = read(_CHUNK)
        if not block:
            break
        digest.update(block)
        end = block.find(b"\n")
        if end < 0:
            if size >= 0:
                size += len(block)
                held.append(block)
                if size > MAX_LINE_BYTES:
                    held, size = [], -1
            continue
        number += 1
        if size < 0 or size + end > MAX_LINE_BYTES:
            yield number, None
        else:
            yield number, b"".join(held) + block[:end + 1] if held else block[:end + 1]
        held, size = [], 0
        start = end + 1
        end = block.find(b"\n", start)
        while end >= 0:  # whole lines inside the block (a block is far shorter than MAX_LINE_BYTES)
            number += 1
            yield number, block[start:end + 1]
            start = end + 1
            end = block.find(b"\n", start)
        if start < len(block):
            held, size = [block[start:]], len(block) - start
    if size < 0:
        yield number + 1, None
    elif held:
        yield number + 1, b"".join(held)


def _json_units(path: Path, handle: BinaryIO, tally: Tally, digest) -> Iterator[tuple[int, str, str, Any]]:
    if _kind(path) == ".json":
        whole = _whole_json(handle, digest)
        if whole is not None:
            for number, request in enumerate(whole if isinstance(whole, list) else [whole], start=1):
                tally.lines_read += 1
                yield tally.lines_read, f"{path}: request {number}", REQUEST, request
            return
    for number, line in _lines(handle, digest):
        if line is not None and not line.strip():
            continue
        tally.lines_read += 1
        yield tally.lines_read, f"{path}: line {number}", LINE if line is not None else LONG_LINE, line


def _whole_json(handle: BinaryIO, digest) -> Any:
    """A .json file read as one document when it is one (then its bytes are in ``digest``); else None,
    with the handle back at the start for line-by-line reading."""
    head = handle.read(_WHOLE_JSON_BYTES + 1)
    handle.seek(0)
    if len(head) > _WHOLE_JSON_BYTES:
        return None
    try:
        value = json.loads(head)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    digest.update(head)
    handle.read()  # consumed: the caller reads nothing more of this file
    return value


def _proto_units(path: Path, handle: BinaryIO, tally: Tally, digest) -> Iterator[tuple[int, str, str, Any]]:
    from google.protobuf.message import DecodeError

    from .otlp_proto import framed_messages, request_class

    request_type = request_class()
    for number, body, skip in framed_messages(handle, digest):
        where = f"{path}: message {number}"
        tally.lines_read += 1
        if skip is not None:
            yield tally.lines_read, where, BROKEN, (skip.reason, skip.detail)
            continue
        try:
            request = request_type.FromString(body)
        except (DecodeError, RecursionError) as exc:
            yield tally.lines_read, where, BROKEN, ("malformed protobuf", str(exc)[:120] or "cannot be parsed")
            continue
        yield tally.lines_read, where, MESSAGE, request
