"""``sonar traces serve``: an OTLP/HTTP trace receiver that writes what it receives to span files.

``POST /v1/traces`` with an ``ExportTraceServiceRequest`` body, as an OpenTelemetry OTLP/HTTP exporter
sends it: ``Content-Type: application/x-protobuf`` (parsed by ``opentelemetry-proto``) or
``application/json`` (OTLP JSON), optionally ``Content-Encoding: gzip``. A request that parses is
appended whole to the current span file (:mod:`.rotation`) and answered ``200`` with an empty
``ExportTraceServiceResponse`` in the request's encoding. Anything else is answered and counted, never
a crash: a body over ``max_body_bytes`` (before or after gunzip), a body that does not parse, an empty
or unknown encoding: ``400`` with a ``google.rpc.Status`` saying why; an unknown content type ``415``;
another path ``404``; a body without ``Content-Length`` ``411``. Each connection has a read timeout.
"""

from __future__ import annotations

import json
import sys
import threading
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from .rotation import RotatingSpanFiles

__all__ = ["Receiver", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_FILE_BYTES", "TRACES_PATH"]

TRACES_PATH = "/v1/traces"
DEFAULT_MAX_BODY_BYTES = 16 * 2**20
DEFAULT_MAX_FILE_BYTES = 64 * 2**20
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
#: A body this much past the limit is read and thrown away (so the client sees the 400); a larger one closes.
_DRAIN_BYTES = 4 * 2**20


class _Rejected(Exception):
    def __init__(self, status: int, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.reason, self.detail = status, reason, detail


def _status_message(code: int, message: str, protobuf: bool) -> bytes:
    """A ``google.rpc.Status`` (code, message): OTLP's error body, in the request's encoding."""
    if not protobuf:
        return json.dumps({"code": code, "message": message}).encode("utf-8")
    text = message.encode("utf-8")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


class Receiver:
    """The server, its span files and its counters; ``serve_forever()`` until ``shutdown()`` (or Ctrl-C)."""

    def __init__(self, folder: Path, host: str = "127.0.0.1", port: int = 4318,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 timeout: float = 30.0, say: Callable[[str], None] | None = None) -> None:
        self.files = RotatingSpanFiles(folder, max_file_bytes)
        self.max_body_bytes = max_body_bytes
        self.timeout = timeout
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.lock = threading.Lock()
        self.accepted = 0
        self.spans = 0
        #: Reason -> requests answered with an error.
        self.rejected: Counter = Counter()
        self.server = ThreadingHTTPServer((host, port), self._handler_class())
        self.server.daemon_threads = True

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop serving (from another thread), then close the socket and the span files."""
        self.server.shutdown()
        self.close()

    def close(self) -> None:
        self.server.server_close()
        self.files.close()

    def summary(self) -> dict:
        with self.lock:
            return {"accepted_requests": self.accepted, "spans": self.spans,
                    "rejected_requests": dict(sorted(self.rejected.items())),
                    "files": [str(p) for p in self.files.written]}

    def _reject(self, reason: str, detail: str, peer: str) -> None:
        with self.lock:
            self.rejected[reason] += 1
        self.say(f"rejected a request from {peer}: {reason}: {detail}")

    def _handler_class(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = receiver.timeout

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
                pass  # one line per rejected request is enough; accepted ones are counted

            def _answer(self, status: int, body: bytes, content_type: str, close: bool = False) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                if close:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._refuse(_Rejected(405, "method not allowed", f"GET {self.path[:100]}"), False)

            def do_POST(self) -> None:
                protobuf = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower() == _PROTOBUF
                try:
                    spans = receiver._receive(self)
                except _Rejected as rejected:
                    self._refuse(rejected, protobuf)
                except Exception as exc:  # never a crash: the client hears 500, the receiver goes on
                    self._refuse(_Rejected(500, "internal error", f"{type(exc).__name__}: {exc}"[:200]), protobuf)
                else:
                    with receiver.lock:
                        receiver.accepted += 1
                        receiver.spans += spans
                    self._answer(200, b"" if protobuf else b"{}", _PROTOBUF if protobuf else _JSON)

            def _refuse(self, rejected: _Rejected, protobuf: bool) -> None:
                receiver._reject(rejected.reason, rejected.detail, self.client_address[0])
                body = _status_message(3 if rejected.status == 400 else 2, f"{rejected.reason}: {rejected.detail}",
                                       protobuf)
                try:
                    self._answer(rejected.status, body, _PROTOBUF if protobuf else _JSON,
                                 close=getattr(self, "_unread", False))
                except OSError:
                    self.close_connection = True

        return Handler

    def _read_body(self, handler) -> bytes:
        handler._unread = True
        if handler.path.split("?")[0] != TRACES_PATH:
            raise _Rejected(404, "not found", f"POST {handler.path[:100]} (send spans to {TRACES_PATH})")
        length = handler.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            raise _Rejected(411, "no content length", "the request must give Content-Length")
        size = int(length)
        if size > self.max_body_bytes:
            if size <= self.max_body_bytes + _DRAIN_BYTES:
                handler.rfile.read(size)
                handler._unread = False
            raise _Rejected(400, "body too large", f"{size:,} bytes (limit {self.max_body_bytes:,})")
        body = handler.rfile.read(size)
        handler._unread = False
        if len(body) < size:
            raise _Rejected(400, "truncated body", f"{len(body):,} of {size:,} bytes before the connection ended")
        encoding = (handler.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "gzip":
            return self._gunzip(body)
        if encoding != "identity":
            raise _Rejected(400, "unknown content encoding", f"{encoding[:40]!r} (use gzip or none)")
        return body

    def _gunzip(self, body: bytes) -> bytes:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, self.max_body_bytes + 1)
        except zlib.error as exc:
            raise _Rejected(400, "malformed gzip", str(exc)[:120]) from None
        if len(data) > self.max_body_bytes or inflater.unconsumed_tail:
            raise _Rejected(400, "body too large", f"over {self.max_body_bytes:,} bytes once decompressed")
        return data

    def _receive(self, handler) -> int:
        """Read, check and store one request; the number of spans it held."""
        body = self._read_body(handler)
        content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type == _PROTOBUF:
            return self._protobuf(body)
        if content_type == _JSON:
            return self._json(body)
        raise _Rejected(415, "unsupported content type", f"{content_type[:60]!r} (use {_PROTOBUF} or {_JSON})")

    def _protobuf(self, body: bytes) -> int:
        from google.protobuf.message import DecodeError

        from ..errors import DatasetError
        from .otlp_proto import request_class

        try:
            request = request_class().FromString(body)
        except DatasetError as exc:
            raise _Rejected(415, "protobuf not installed", str(exc)) from None
        except (DecodeError, RecursionError) as exc:
            raise _Rejected(400, "malformed protobuf", str(exc)[:120] or "cannot be parsed") from None
        spans = sum(len(scope.spans) for group in request.resource_spans for scope in group.scope_spans)
        self.files.write_proto(body)
        return spans

    def _json(self, body: bytes) -> int:
        try:
            request = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise _Rejected(400, "malformed JSON", str(exc).splitlines()[0][:120] if str(exc) else "") from None
        groups = request.get("resourceSpans", request.get("resource_spans")) if isinstance(request, dict) else None
        if not isinstance(groups, list):
            raise _Rejected(400, "not an OTLP trace request", "expected an object with a 'resourceSpans' list")
        spans = 0
        for group in groups:
            scopes = (group.get("scopeSpans") or group.get("scope_spans") or []) if isinstance(group, dict) else []
            for scope in scopes if isinstance(scopes, list) else ():
                found = scope.get("spans") if isinstance(scope, dict) else None
                spans += len(found) if isinstance(found, list) else 0
        try:
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a "\ud800" escape): kept as an escape
            line = json.dumps(request, separators=(",", ":")).encode("ascii")
        self.files.write_json(line)
        return spans
