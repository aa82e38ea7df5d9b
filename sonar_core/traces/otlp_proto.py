"""OTLP protobuf: ``ExportTraceServiceRequest`` messages decoded by the real ``opentelemetry-proto`` package.

A protobuf span file holds messages as the OpenTelemetry Collector's file exporter writes them with
``format: proto``: each message preceded by its length, 4 bytes big-endian (:func:`framed_messages`).
The same decoding serves ``sonar traces serve``'s protobuf bodies. The package is the ``traces`` extra
(``pip install sonar-eval[traces]``); OTLP JSON needs nothing beyond the base install.
"""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator

from ..errors import DatasetError
from .otlp_json import EVENT_PREFIX, check_times
from .spans import RawSpan, SpanSkip, Tally

__all__ = ["request_class", "spans_of_message", "framed_messages", "MAX_MESSAGE_BYTES"]

#: The largest framed message read (a longer length is a broken file, not a message).
MAX_MESSAGE_BYTES = 256 * 2**20


def request_class():
    """``ExportTraceServiceRequest``, or a one-line error naming the extra to install."""
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise DatasetError("reading OTLP protobuf needs the opentelemetry-proto package: "
                           "pip install 'sonar-eval[traces]' (OTLP JSON needs nothing more)") from None
    return ExportTraceServiceRequest


def _any(value, limit: int, key: str) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        text = value.string_value
        if len(text) > limit:
            raise SpanSkip("attribute too large", f"attribute '{key}' holds {len(text):,} characters (limit {limit:,})")
        return text
    if which is None:
        return None
    if which == "array_value":
        return [_any(item, limit, key) for item in value.array_value.values]
    if which == "kvlist_value":
        return _attributes(value.kvlist_value.values, limit)
    if which == "bytes_value":
        import base64

        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, which)


def _attributes(items, limit: int) -> dict[str, Any]:
    return {item.key: _any(item.value, limit, item.key) for item in items}


def _id(raw: bytes, size: int, what: str, empty_ok: bool = False) -> str:
    if not raw and empty_ok:
        return ""
    if len(raw) != size or not any(raw):
        if empty_ok and not any(raw):
            return ""
        raise SpanSkip("invalid ids", f"{what} is {len(raw)} bytes{' of zeros' if raw else ''}, not {size}")
    return raw.hex()


def _span(span, service: str, where: str, limit: int) -> RawSpan:
    trace_id = _id(span.trace_id, 16, "trace_id")
    span_id = _id(span.span_id, 8, "span_id")
    parent_id = _id(span.parent_span_id, 8, "parent_span_id", empty_ok=True)
    start, end = check_times(span.start_time_unix_nano, span.end_time_unix_nano)
    events = [(event.name, _attributes(event.attributes, limit)) for event in span.events
              if event.name.startswith(EVENT_PREFIX)]
    return RawSpan(trace_id, span_id, parent_id, span.name, start, end, _attributes(span.attributes, limit),
                   events, service, where)


def spans_of_message(request, where: str, tally: Tally, limit: int) -> Iterator[RawSpan]:
    """The spans of one parsed ``ExportTraceServiceRequest``; a broken span is counted and passed over."""
    for group in request.resource_spans:
        service = ""
        for item in group.resource.attributes:
            if item.key == "service.name" and item.value.WhichOneof("value") == "string_value":
                service = item.value.string_value
        for scope in group.scope_spans:
            for span in scope.spans:
                tally.spans_read += 1
                try:
                    yield _span(span, service, where, limit)
                except SpanSkip as skip:
                    tally.skip_spans(f"{where}, span {span.span_id.hex()}", skip)


def framed_messages(handle: BinaryIO, digest) -> Iterator[tuple[int, bytes | None, SpanSkip | None]]:
    """``(number, message bytes, None)`` per length-prefixed message, from 1; a length past the end or
    past :data:`MAX_MESSAGE_BYTES` gives ``(number, None, skip)`` and ends the file."""
    number = 0
    while True:
        head = handle.read(4)
        digest.update(head)
        if not head:
            return
        number += 1
        if len(head) < 4:
            yield number, None, SpanSkip("truncated protobuf message", "the file ends inside a length prefix")
            return
        size = int.from_bytes(head, "big")
        if size > MAX_MESSAGE_BYTES:
            yield number, None, SpanSkip("truncated protobuf message",
                                         f"length prefix {size:,} bytes is past the {MAX_MESSAGE_BYTES:,} limit")
            digest.update(handle.read())
            return
        body = handle.read(size)
        digest.update(body)
        if len(body) < size:
            yield number, None, SpanSkip("truncated protobuf message",
                                         f"{len(body):,} of {size:,} bytes before the file ends")
            return
        yield number, body, None
