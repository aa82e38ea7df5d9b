"""OTLP JSON: one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) as spans.

The OTLP JSON encoding is protobuf's JSON mapping with OTLP's own rules: field names in lowerCamelCase
(snake_case accepted too, as protobuf's parsers do), trace and span ids as hex strings (base64, which a
plain protobuf JSON printer writes, is accepted as well), 64-bit integers as strings (``intValue``,
``startTimeUnixNano``), enums as numbers. An attribute value is an ``AnyValue``: one of
``stringValue``, ``boolValue``, ``intValue``, ``doubleValue``, ``arrayValue {values}``,
``kvlistValue {values: [{key, value}]}``, ``bytesValue`` (base64, kept as that text).

A span whose ids, times or attributes break these rules is skipped with the reason; the rest of its
request is read.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Iterator

from .spans import RawSpan, SpanSkip, Tally

__all__ = ["spans_of_request", "normal_id", "check_times", "EVENT_PREFIX"]

#: Span events kept (their attributes may carry GenAI messages); other events are not read.
EVENT_PREFIX = "gen_ai."
_HEX = {8: re.compile("[0-9a-fA-F]{16}"), 16: re.compile("[0-9a-fA-F]{32}")}
_FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def normal_id(value: Any, size: int, what: str, empty_ok: bool = False) -> str:
    """An id of ``size`` bytes as lowercase hex, from hex (OTLP JSON) or base64 (protobuf's JSON mapping)."""
    if not isinstance(value, str):
        if value is None and empty_ok:
            return ""
        raise SpanSkip("invalid ids", f"{what} must be a string, got {type(value).__name__}")
    if not value and empty_ok:
        return ""
    if _HEX[size].fullmatch(value):
        text = value.lower()
        if text.strip("0") == "":
            if empty_ok:
                return ""
            raise SpanSkip("invalid ids", f"{what} is all zeros")
        return text
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size and any(raw):
        return raw.hex()
    raise SpanSkip("invalid ids", f"{what} {value[:40]!r} is not {size} bytes of hex")


def check_times(start: Any, end: Any) -> tuple[int, int]:
    """Start and end in ns (integers or their decimal text), end not before start."""
    try:
        begin, finish = int(start), int(end)
    except (TypeError, ValueError):
        raise SpanSkip("invalid timestamps", f"start {str(start)[:30]!r}, end {str(end)[:30]!r}") from None
    if isinstance(start, (bool, float)) or isinstance(end, (bool, float)):
        raise SpanSkip("invalid timestamps", "times must be whole numbers of nanoseconds")
    if begin <= 0 or finish <= 0:
        raise SpanSkip("invalid timestamps", "a start or end time is missing")
    if finish < begin:
        raise SpanSkip("ends before it starts", f"end {finish} is {begin - finish} ns before start {begin}")
    return begin, finish


def _get(obj: dict, camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def any_value(value: Any, limit: int, key: str) -> Any:
    """An ``AnyValue`` as a Python value; a text over ``limit`` characters skips the span."""
    if type(value) is not dict:
        raise SpanSkip("wrong attribute type", f"attribute '{key}': value must be an AnyValue object")
    text = value.get("stringValue")
    if text is not None:
        if type(text) is not str:
            raise SpanSkip("wrong attribute type", f"attribute '{key}': stringValue must be a string")
        if len(text) > limit:
            raise SpanSkip("attribute too large", f"attribute '{key}' holds {len(text):,} characters "
                                                  f"(limit {limit:,})")
        return text
    if not value:
        return None
    for name, convert in _SCALARS:
        if name in value:
            return convert(value[name], key)
    array = _get(value, "arrayValue", "array_value")
    if array is not None:
        items = array.get("values", []) if type(array) is dict else None
        if type(items) is not list:
            raise SpanSkip("wrong attribute type", f"attribute '{key}': arrayValue.values must be a list")
        return [any_value(item, limit, key) for item in items]
    kvlist = _get(value, "kvlistValue", "kvlist_value")
    if kvlist is not None:
        items = kvlist.get("values", []) if type(kvlist) is dict else None
        if type(items) is not list:
            raise SpanSkip("wrong attribute type", f"attribute '{key}': kvlistValue.values must be a list")
        return attributes(items, limit)
    raise SpanSkip("wrong attribute type", f"attribute '{key}': unknown AnyValue field {next(iter(value))!r}")


def _int(raw: Any, key: str) -> int:
    if type(raw) is int or (type(raw) is str and raw.lstrip("-").isdigit()):
        return int(raw)
    raise SpanSkip("wrong attribute type", f"attribute '{key}': intValue {str(raw)[:30]!r} is not an integer")


def _double(raw: Any, key: str) -> float:
    if type(raw) in (int, float):
        return float(raw)
    if type(raw) is str and raw in _FLOATS:
        return _FLOATS[raw]
    raise SpanSkip("wrong attribute type", f"attribute '{key}': doubleValue {str(raw)[:30]!r} is not a number")


def _bool(raw: Any, key: str) -> bool:
    if type(raw) is bool:
        return raw
    raise SpanSkip("wrong attribute type", f"attribute '{key}': boolValue {str(raw)[:30]!r} is not true or false")


def _bytes(raw: Any, key: str) -> str:
    if type(raw) is str:
        return raw
    raise SpanSkip("wrong attribute type", f"attribute '{key}': bytesValue must be base64 text")


_SCALARS = (("intValue", _int), ("int_value", _int), ("doubleValue", _double), ("double_value", _double),
            ("boolValue", _bool), ("bool_value", _bool), ("bytesValue", _bytes), ("bytes_value", _bytes))


def attributes(items: Any, limit: int) -> dict[str, Any]:
    """A list of ``{key, value}`` as a dict (a repeated key: the last wins, as in the SDKs)."""
    if type(items) is not list:
        raise SpanSkip("wrong attribute type", "attributes must be a list of {key, value}")
    out: dict[str, Any] = {}
    for item in items:
        try:  # the common case first: a text key and a short stringValue
            key, value = item["key"], item["value"]
            text = value.get("stringValue")
            if type(text) is str and type(key) is str and len(text) <= limit:
                out[key] = text
                continue
        except (KeyError, TypeError, AttributeError):
            key = item.get("key") if type(item) is dict else None
            value = item.get("value") if type(item) is dict else None
        if type(key) is not str:
            raise SpanSkip("wrong attribute type", "an attribute has no text 'key'")
        out[key] = any_value(value, limit, key)
    return out


def _events(items: Any, limit: int) -> list[tuple[str, dict[str, Any]]]:
    if not items:
        return []
    if type(items) is not list:
        raise SpanSkip("wrong attribute type", "events must be a list")
    kept = []
    for event in items:
        name = event.get("name") if type(event) is dict else None
        if type(name) is str and name.startswith(EVENT_PREFIX):
            kept.append((name, attributes(event.get("attributes", []), limit)))
    return kept


def _span(span: Any, service: str, where: str, limit: int) -> RawSpan:
    if type(span) is not dict:
        raise SpanSkip("not an OTLP span", f"expected an object, got {type(span).__name__}")
    trace_id = normal_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    span_id = normal_id(_get(span, "spanId", "span_id"), 8, "spanId")
    parent_id = normal_id(_get(span, "parentSpanId", "parent_span_id"), 8, "parentSpanId", empty_ok=True)
    name = span.get("name", "")
    if type(name) is not str:
        raise SpanSkip("wrong attribute type", "the span's name must be a string")
    start, end = check_times(_get(span, "startTimeUnixNano", "start_time_unix_nano"),
                             _get(span, "endTimeUnixNano", "end_time_unix_nano"))
    attrs = attributes(span.get("attributes", []), limit)
    return RawSpan(trace_id, span_id, parent_id, name, start, end, attrs, _events(span.get("events"), limit),
                   service, where)


def _service(resource: Any, limit: int) -> str:
    if type(resource) is not dict:
        return ""
    try:
        found = attributes(resource.get("attributes", []), limit).get("service.name", "")
    except SpanSkip:
        return ""
    return found if type(found) is str else ""


def spans_of_request(request: Any, where: str, tally: Tally, limit: int) -> Iterator[RawSpan]:
    """The spans of one decoded JSON request; a broken span is counted in ``tally`` and passed over.

    Raises :class:`SpanSkip` when ``request`` is not an ``ExportTraceServiceRequest`` at all.
    """
    groups = _get(request, "resourceSpans", "resource_spans") if type(request) is dict else None
    if type(groups) is not list:
        raise SpanSkip("not an OTLP trace request", "expected an object with a 'resourceSpans' list")
    for group in groups:
        if type(group) is not dict:
            continue
        service = _service(group.get("resource"), limit)
        scopes = _get(group, "scopeSpans", "scope_spans") or group.get("instrumentationLibrarySpans") or []
        for scope in scopes if type(scopes) is list else ():
            spans = scope.get("spans", []) if type(scope) is dict else ()
            for span in spans if type(spans) is list else ():
                tally.spans_read += 1
                try:
                    yield _span(span, service, where, limit)
                except SpanSkip as skip:
                    tally.skip_spans(_where(where, span), skip)


def _where(where: str, span: Any) -> str:
    """``where`` with the span's id when it has a readable one."""
    span_id = _get(span, "spanId", "span_id") if type(span) is dict else None
    return f"{where}, span {span_id[:32]}" if isinstance(span_id, str) and span_id else where
