"""Hand-written OTLP payloads for the trace tests: spans in the OTLP JSON encoding, their protobuf twins.

``span(...)`` builds one span as OTLP JSON (hex ids, 64-bit integers as text, AnyValue attributes);
``request(spans)`` wraps spans in an ``ExportTraceServiceRequest``; ``write_jsonl`` writes requests a line
each (the OpenTelemetry file exporter's format); ``to_protobuf`` turns a JSON request into the real
``opentelemetry-proto`` message (ids from hex to bytes), and ``write_pb`` frames messages as the
Collector's file exporter does (4-byte big-endian length before each). ``from_otlp_json`` parses an
OTLP JSON line with ``google.protobuf.json_format`` (after the hex ids become base64, which protobuf's
JSON mapping expects): how a test checks that a file any OTLP receiver ingests is what it should be.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

#: A base time (ns since the epoch) and one second.
T0 = 1_717_000_000_000_000_000
S = 1_000_000_000


def value(v: Any) -> dict[str, Any]:
    """A Python value as an OTLP JSON AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": value(x)} for k, x in v.items()]}}
    raise TypeError(type(v))


def attrs(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in pairs.items()]


def span(trace_id: str, span_id: str, parent: str, name: str, start: float, end: float,
         attributes: dict[str, Any] | None = None, events: list | None = None) -> dict[str, Any]:
    """One OTLP JSON span; ``start`` and ``end`` in seconds after T0."""
    out = {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
           "startTimeUnixNano": str(T0 + int(start * S)), "endTimeUnixNano": str(T0 + int(end * S)),
           "attributes": attrs(attributes or {}), "status": {}}
    if events:
        out["events"] = [{"name": n, "timeUnixNano": str(T0), "attributes": attrs(a)} for n, a in events]
    return out


def request(spans: list[dict[str, Any]], service: str = "app") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": attrs({"service.name": service})},
                               "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}


def write_jsonl(path: Path, requests: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return path


def _ids_to_base64(obj: Any) -> Any:
    if isinstance(obj, dict):
        out = {}
        for key, item in obj.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64encode(bytes.fromhex(item)).decode("ascii")
            else:
                out[key] = _ids_to_base64(item)
        return out
    if isinstance(obj, list):
        return [_ids_to_base64(x) for x in obj]
    return obj


def to_protobuf(request_json: dict[str, Any]):
    """The real ExportTraceServiceRequest of an OTLP JSON request."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return json_format.ParseDict(_ids_to_base64(copy.deepcopy(request_json)), ExportTraceServiceRequest())


def from_otlp_json(line: str):
    """An OTLP JSON line parsed by protobuf's json_format into ExportTraceServiceRequest (strict: an unknown
    field or a wrong type fails)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return json_format.Parse(json.dumps(_ids_to_base64(json.loads(line))), ExportTraceServiceRequest())


def write_pb(path: Path, requests: list[dict[str, Any]]) -> Path:
    with open(path, "wb") as handle:
        for r in requests:
            body = to_protobuf(r).SerializeToString()
            handle.write(len(body).to_bytes(4, "big") + body)
    return path
