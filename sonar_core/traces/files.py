"""Span files: which files a ``traces:`` entry names, and their spans, read one line (or message) at a time.

* ``.jsonl`` / ``.ndjson`` / ``.json``: OTLP JSON, one ``ExportTraceServiceRequest`` per line, as the
  OpenTelemetry Collector's file exporter and ``sonar traces serve`` write them (a ``.json`` file
  holding one pretty-printed request, or a list of them, is read too);
* ``.pb`` / ``.binpb``: OTLP protobuf, each message preceded by its 4-byte big-endian length (the
  Collector's file exporter with ``format: proto``);
* any of them compressed as ``.gz``.

A folder stands for its span files, by name. A line that is not JSON, not an OTLP request, or cut
short (the last line of a file still being written) is skipped and counted; so is a message that is
not protobuf. Memory stays bounded by the longest line (at most :data:`MAX_LINE_BYTES`).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from ..errors import DatasetError
from .otlp_json import spans_of_request

try:  # twice as fast on large files; json (below) still reads what it refuses (NaN, lone surrogates)
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson comes with the traces extra
    _fast_loads = None
from .spans import RawSpan, SpanSkip, Tally

__all__ = ["resolve_files", "read_spans", "trace_ends", "SPAN_SUFFIXES", "MAX_LINE_BYTES"]

SPAN_SUFFIXES = (".jsonl", ".ndjson", ".json", ".pb", ".binpb")
_PROTO = (".pb", ".binpb")
#: A longer line is skipped whole ("line too long"): it is read in pieces, never held.
MAX_LINE_BYTES = 128 * 2**20
#: A .json file up to this size is first tried as one JSON document.
_WHOLE_JSON_BYTES = 64 * 2**20
_CHUNK = 1 << 20


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


def _units(files: list[Path], tally: Tally, digest) -> Iterator[tuple[int, str, Any]]:
    """``(unit, where, request)`` per decodable line or message of ``files`` (a JSON object, or a parsed protobuf
    ``ExportTraceServiceRequest``), numbered by ``tally.lines_read``; what cannot be decoded is counted."""
    for path in files:
        tally.files.append(str(path))
        try:
            opened: BinaryIO = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
        with opened as handle:
            try:
                if _kind(path) in _PROTO:
                    yield from _proto_units(path, handle, tally, digest)
                else:
                    yield from _json_units(path, handle, tally, digest)
            except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
                tally.skip_line(str(path), SpanSkip("truncated compressed file", str(exc)[:120]))
            except OSError as exc:
                raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None


def read_spans(files: list[Path], tally: Tally, digest, limit: int) -> Iterator[RawSpan]:
    """Every readable span of ``files``, in file order (``RawSpan.unit`` numbers its line or message); what
    cannot be read is counted in ``tally``."""
    for unit, where, request in _units(files, tally, digest):
        if isinstance(request, dict):
            try:
                for span in spans_of_request(request, where, tally, limit):
                    span.unit = unit
                    yield span
            except SpanSkip as skip:
                tally.skip_line(where, skip)
        else:
            from .otlp_proto import spans_of_message

            for span in spans_of_message(request, where, tally, limit):
                span.unit = unit
                yield span


class _NoDigest:
    def update(self, data: bytes) -> None:
        pass


#: Any "traceId" (or "trace_id") with its text in a JSON line: every span's, and a link's too, which only
#: makes a trace wait longer. A span this misses (its key written with escapes) arrives after its trace was
#: handed over, and is skipped and counted ("span after its trace").
_TRACE_ID = re.compile(rb'"trace_?[iI]d"\s*:\s*"([^"\\]{1,64})"')


def trace_ends(files: list[Path]) -> dict[str, int]:
    """A first, lighter pass: trace id -> the unit (line or message, as :func:`read_spans` numbers them) that
    holds the trace's last span. Only ids are read: a JSON line is searched for them, not parsed."""
    from .otlp_json import normal_id

    ends: dict[str, int] = {}
    for unit, found in _id_units(files):
        for raw in found:
            try:
                ends[normal_id(raw if isinstance(raw, str) else raw.decode("ascii", "replace"), 16, "traceId")] = unit
            except SpanSkip:
                continue
    return ends


def _id_units(files: list[Path]) -> Iterator[tuple[int, list]]:
    """``(unit, trace ids)`` numbered as :func:`_units` numbers units (a JSON line that is not an object, or does
    not parse, is a unit too; so is a protobuf message, parsed for its ids)."""
    tally = Tally()
    for path in files:
        if _kind(path) in _PROTO or _is_whole_json(path):  # read as the second pass reads them
            for unit, _, request in _units([path], tally, _NoDigest()):
                yield unit, (_proto_trace_ids(request) if not isinstance(request, dict)
                             else _TRACE_ID.findall(json.dumps(request).encode()))
            continue
        opened = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
        with opened as handle:
            try:
                for _, line in _lines(handle, _NoDigest()):
                    if line is not None and not line.strip():
                        continue
                    tally.lines_read += 1
                    yield tally.lines_read, _TRACE_ID.findall(line) if line is not None else []
            except (EOFError, gzip.BadGzipFile, zlib.error):
                continue


def _is_whole_json(path: Path) -> bool:
    """Whether a .json file holds one JSON document (not JSON lines, as the Collector writes into .json too)."""
    if _kind(path) != ".json":
        return False
    try:
        with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")) as handle:
            return _whole_json(handle, _NoDigest()) is not None
    except (OSError, EOFError, zlib.error):
        return False


def _proto_trace_ids(request) -> list[str]:
    return [span.trace_id.hex() for group in request.resource_spans for scope in group.scope_spans
            for span in scope.spans if len(span.trace_id) == 16]


def _lines(handle: BinaryIO, digest) -> Iterator[tuple[int, bytes | None]]:
    """``(number, line)`` from 1; a line past MAX_LINE_BYTES comes as ``(number, None)`` after being read through."""
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        digest.update(line)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # the rest of the long line, a chunk at a time
                rest = handle.readline(_CHUNK)
                digest.update(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, line


def _json_units(path: Path, handle: BinaryIO, tally: Tally, digest) -> Iterator[tuple[int, str, Any]]:
    if _kind(path) == ".json":
        whole = _whole_json(handle, digest)
        if whole is not None:
            tally.surrogates = True  # read by the standard parser: it may hold lone surrogates
            for number, request in enumerate(whole if isinstance(whole, list) else [whole], start=1):
                tally.lines_read += 1
                yield tally.lines_read, f"{path}: request {number}", request
            return
    for number, line in _lines(handle, digest):
        where = f"{path}: line {number}"
        if line is not None and not line.strip():
            continue
        tally.lines_read += 1
        if line is None:
            tally.skip_line(where, SpanSkip("line too long", f"over {MAX_LINE_BYTES:,} bytes"))
            continue
        try:
            request = _decode(line, tally)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            reason = "truncated line" if not line.endswith(b"\n") else "malformed JSON"
            tally.skip_line(where, SpanSkip(reason, str(exc).splitlines()[0][:120]))
            continue
        except RecursionError:
            tally.skip_line(where, SpanSkip("malformed JSON", "nested too deeply"))
            continue
        if not isinstance(request, dict):
            tally.skip_line(where, SpanSkip("not an OTLP trace request", "expected an object with a 'resourceSpans' list"))
            continue
        yield tally.lines_read, where, request


def _decode(line: bytes, tally: Tally) -> Any:
    """One line's JSON; a line only the standard parser reads may hold lone surrogates, and ``tally`` says so."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:
            pass
    value = json.loads(line)
    tally.surrogates = True
    return value


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


def _proto_units(path: Path, handle: BinaryIO, tally: Tally, digest) -> Iterator[tuple[int, str, Any]]:
    from google.protobuf.message import DecodeError

    from .otlp_proto import framed_messages, request_class

    request_type = request_class()
    for number, body, skip in framed_messages(handle, digest):
        where = f"{path}: message {number}"
        tally.lines_read += 1
        if skip is not None:
            tally.skip_line(where, skip)
            continue
        try:
            request = request_type.FromString(body)
        except (DecodeError, RecursionError) as exc:
            tally.skip_line(where, SpanSkip("malformed protobuf", str(exc)[:120] or "cannot be parsed"))
            continue
        yield tally.lines_read, where, request
