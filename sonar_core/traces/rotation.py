"""Span files written as requests arrive: ``spans-000001.jsonl`` (OTLP JSON, a request per line) and
``spans-000002.pb`` (OTLP protobuf, each message after its 4-byte big-endian length, as the Collector's
file exporter writes them), a new file once one passes ``max_bytes``.

Numbers continue after the highest already in the folder, so a restarted receiver never overwrites,
and files sort by name in the order they were begun (``sonar run --traces FOLDER`` reads them so).
Every request is written whole and flushed before it is answered.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

__all__ = ["RotatingSpanFiles", "JSON_SUFFIX", "PROTO_SUFFIX"]

JSON_SUFFIX = ".jsonl"
PROTO_SUFFIX = ".pb"
_NAME = re.compile(r"spans-(\d{6,})\.(?:jsonl|pb)$")


class RotatingSpanFiles:
    """Appends requests to the current file of their encoding; thread-safe."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        numbers = [int(m.group(1)) for p in self.folder.iterdir() if (m := _NAME.match(p.name))]
        self._next = max(numbers, default=0) + 1
        self._open: dict[str, tuple] = {}  # suffix -> (handle, bytes written)
        self.closed = False
        #: Every file this writer made, in order.
        self.written: list[Path] = []

    def _handle(self, suffix: str, size: int):
        current = self._open.get(suffix)
        if current is not None and current[1] > 0 and current[1] + size > self.max_bytes:
            current[0].close()
            current = None
        if current is None:
            path = self.folder / f"spans-{self._next:06d}{suffix}"
            self._next += 1
            current = (open(path, "xb"), 0)
            self.written.append(path)
        return current

    def _append(self, suffix: str, data: bytes) -> None:
        with self._lock:
            if self.closed:
                raise OSError("the span files are closed (the receiver is stopping)")
            handle, written = self._handle(suffix, len(data))
            handle.write(data)
            handle.flush()
            self._open[suffix] = (handle, written + len(data))

    def write_json(self, line: bytes) -> None:
        """One OTLP JSON request, as one line (it must hold no line break)."""
        self._append(JSON_SUFFIX, line + b"\n")

    def write_proto(self, message: bytes) -> None:
        """One serialised ``ExportTraceServiceRequest``, length-prefixed."""
        self._append(PROTO_SUFFIX, len(message).to_bytes(4, "big") + message)

    def close(self) -> None:
        with self._lock:
            for handle, _ in self._open.values():
                handle.close()
            self._open = {}
            self.closed = True
