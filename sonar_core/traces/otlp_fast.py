"""The usual OTLP JSON line, read fast: decoded straight into the typed shapes below by msgspec, then read into
:class:`~.spans.RawSpan` exactly as :mod:`.otlp_json` reads the same line decoded into dicts.

Building a dict per span, per attribute and per attribute value for every span of a line, and reading them
back, is a good part of a load's time; msgspec builds small structs for the shapes OTLP writers write
(camelCase keys, ids and names as strings, attributes as ``{key, value: AnyValue}``) and reads the fields no
row reads (status, links, flags) only as far as to know they are JSON orjson reads. Anything else about a line
sends the whole line back to the general reader
(:func:`~.otlp_json.spans_of_request`), before any of its spans is handed over, so that what a line gives
(spans, skipped spans and their reasons, in order) never depends on which reader read it:

* a key outside these shapes (snake_case, ``instrumentationLibrarySpans``, a misspelt field), a ``null``
  where a value is expected, a value of another JSON type than the shapes say;
* a number either parser reads differently (an integer outside 64 bits, which orjson reads as a float), a
  text orjson refuses (lone surrogates, bytes that are not UTF-8), JSON that is not JSON;
* an ``arrayValue``, ``kvlistValue``, resource or event list that orjson cannot decode, or that is ``null``.

``tests/core/test_traces_fastpaths.py`` compares both readers line by line on hostile input.
"""

from __future__ import annotations

from typing import Any

from .otlp_json import _events, _service, any_value, check_times, normal_id
from .spans import RawSpan, SpanSkip

try:
    import msgspec
    from msgspec import UNSET, Raw, Struct, UnsetType
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - both come with the traces extra
    msgspec = None

__all__ = ["fast_spans", "FAST"]

#: Whether the fast reader is there (msgspec and orjson installed).
FAST = msgspec is not None

#: The integers orjson reads as integers; it reads larger ones as floats, msgspec as integers.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


class _Fallback(Exception):
    """The line goes to the general reader."""


if FAST:
    _EMPTY = Raw()

    class _Value(Struct, forbid_unknown_fields=True):
        """An ``AnyValue``: one of its fields (the arrays and lists kept as raw JSON, read only when present)."""

        stringValue: str | UnsetType = UNSET
        boolValue: bool | UnsetType = UNSET
        intValue: int | str | UnsetType = UNSET
        doubleValue: float | str | UnsetType = UNSET
        bytesValue: str | UnsetType = UNSET
        arrayValue: Raw = _EMPTY
        kvlistValue: Raw = _EMPTY

    class _KeyValue(Struct, forbid_unknown_fields=True):
        key: str
        value: _Value

    class _Span(Struct, forbid_unknown_fields=True):
        traceId: str | None = None
        spanId: str | None = None
        parentSpanId: str | None = None
        traceState: Any = None
        flags: Any = None
        name: str = ""
        kind: Any = None
        startTimeUnixNano: int | str | None = None
        endTimeUnixNano: int | str | None = None
        attributes: list[_KeyValue] = []
        droppedAttributesCount: Any = None
        events: Raw = _EMPTY
        droppedEventsCount: Any = None
        links: Any = None
        droppedLinksCount: Any = None
        status: Any = None

    class _ScopeSpans(Struct, forbid_unknown_fields=True):
        scope: Any = None
        spans: list[_Span] = []
        schemaUrl: Any = None

    class _ResourceSpans(Struct, forbid_unknown_fields=True):
        resource: Raw = _EMPTY
        scopeSpans: list[_ScopeSpans] = []
        schemaUrl: Any = None

    class _Request(Struct, forbid_unknown_fields=True):
        resourceSpans: list[_ResourceSpans]

    _decoder = msgspec.json.Decoder(_Request)


def _raw(value: "Raw") -> Any:
    """A field kept as raw JSON, as orjson reads it (as the general reader would have); None stays a fallback."""
    try:
        found = _loads(memoryview(value))
    except ValueError:
        raise _Fallback from None
    if found is None:
        raise _Fallback
    return found


def _number(value: Any) -> Any:
    """An integer as orjson reads it."""
    if type(value) is int and not _INT_MIN <= value <= _INT_MAX:
        return float(value)
    return value


def _other(value: "_Value", limit: int, key: str) -> Any:
    """An AnyValue with no ``stringValue``, read by :func:`~.otlp_json.any_value` from the dict orjson would have
    made of it."""
    shaped: dict[str, Any] = {}
    if value.boolValue is not UNSET:
        shaped["boolValue"] = value.boolValue
    if value.intValue is not UNSET:
        shaped["intValue"] = _number(value.intValue)
    if value.doubleValue is not UNSET:
        shaped["doubleValue"] = value.doubleValue
    if value.bytesValue is not UNSET:
        shaped["bytesValue"] = value.bytesValue
    if value.arrayValue:
        shaped["arrayValue"] = _raw(value.arrayValue)
    if value.kvlistValue:
        shaped["kvlistValue"] = _raw(value.kvlistValue)
    return any_value(shaped, limit, key)


def _attributes(items: list, limit: int, check_size: bool) -> dict[str, Any]:
    """As :func:`~.otlp_json.attributes`. ``check_size``: whether a text may be over ``limit`` characters."""
    if not check_size:
        out = {item.key: item.value.stringValue for item in items}
        if len(out) == len(items) and UNSET not in out.values():  # every value a text, no key repeated
            return out
    out = {}
    for item in items:
        value = item.value
        text = value.stringValue
        if text is UNSET:
            out[item.key] = _other(value, limit, item.key)
        elif check_size and len(text) > limit:
            raise SpanSkip("attribute too large", f"attribute '{item.key}' holds {len(text):,} characters "
                                                  f"(limit {limit:,})")
        else:
            out[item.key] = text
    return out


def _span(span: "_Span", service: str, where: str, limit: int, check_size: bool) -> RawSpan:
    """As :func:`~.otlp_json._span`, checks in the same order."""
    trace_id = normal_id(span.traceId, 16, "traceId")
    span_id = normal_id(span.spanId, 8, "spanId")
    parent_id = normal_id(span.parentSpanId, 8, "parentSpanId", empty_ok=True)
    start, end = check_times(_number(span.startTimeUnixNano), _number(span.endTimeUnixNano))
    attrs = _attributes(span.attributes, limit, check_size)
    events = _events(_raw(span.events), limit) if span.events else []
    return RawSpan(trace_id, span_id, parent_id, span.name, start, end, attrs, events, service, where)


def fast_spans(line: bytes, where: str, limit: int) -> tuple[list[Any], int] | None:
    """One JSON line's spans: ``(items, spans read)``, each item a :class:`~.spans.RawSpan` or ``(where, SpanSkip)``
    for a span skipped, in the line's order; None when the general reader must read the line (above)."""
    if not FAST:
        return None
    try:
        if not line.isascii():
            line.decode("utf-8")  # msgspec does not check the text of the fields it skips; orjson refuses it
        request = _decoder.decode(line)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError are ValueErrors
        return None
    check_size = len(line) > limit  # a text cannot hold more characters than its line has bytes
    items: list[Any] = []
    read = 0
    try:
        for group in request.resourceSpans:
            service = _service(_raw(group.resource), limit) if group.resource else ""
            for scope in group.scopeSpans:
                for span in scope.spans:
                    read += 1
                    try:
                        items.append(_span(span, service, where, limit, check_size))
                    except SpanSkip as skip:
                        span_id = span.spanId
                        items.append((f"{where}, span {span_id[:32]}" if span_id else where, skip))
    except _Fallback:
        return None
    return items, read
