"""Which convention a span follows, and the span read through it.

A span with ``openinference.span.kind`` is OpenInference's; else one with ``gen_ai.*`` attributes is
GenAI's; else one with attributes only OpenInference writes (``input.value``, ``llm.*``...) is
OpenInference's without its kind (skipped: "no span kind"); anything else (an HTTP or database span)
follows neither ("unknown convention", counted). A skipped span stays in its trace as a bare node
(:func:`skeleton`: ids and times, kind UNKNOWN), so that the spans under it still find their root.
"""

from __future__ import annotations

from typing import Any

from . import genai, openinference
from .spans import UNKNOWN_KIND, RawSpan, SpanInfo, SpanSkip

__all__ = ["read_span", "skeleton", "attribute_text"]


def attribute_text(value: Any) -> str:
    """An attribute as the text a filter compares: booleans as ``true``/``false``, numbers as Python prints them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


#: The filter attributes of a span when the run's filters name none (shared: nothing changes it).
_NO_ATTRS: dict[str, str] = {}


def _filter_attrs(attrs: dict[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    if not keys:
        return _NO_ATTRS
    return {key: attribute_text(attrs[key]) for key in keys if key in attrs and attrs[key] is not None}


def read_span(raw: RawSpan, filter_keys: tuple[str, ...] = ()) -> SpanInfo:
    """The span through its convention; raises :class:`SpanSkip` when it cannot be used."""
    attrs = raw.attributes
    if openinference.KIND_KEY in attrs:
        fields, convention = openinference.extract(raw), "openinference"
    elif genai.is_genai(attrs):
        fields, convention = genai.extract(raw), "genai"
    elif openinference.is_openinference(attrs):
        fields, convention = openinference.extract(raw), "openinference"
    else:
        raise SpanSkip("unknown convention", f"span {raw.name[:60]!r} has neither OpenInference nor GenAI attributes")
    kind, model, session, question, answer, messages, reply, documents, tool, tokens_in, tokens_out, cost = fields
    return SpanInfo(raw.trace_id, raw.span_id, raw.parent_id, raw.name, kind, raw.start, raw.end, raw.service, model,
                    session, question, answer, messages, reply, documents, tool, tokens_in, tokens_out, cost,
                    _filter_attrs(attrs, filter_keys), raw.where, convention)


def skeleton(raw: RawSpan, filter_keys: tuple[str, ...] = ()) -> SpanInfo:
    """A span that gives no content but keeps its place in its trace's tree."""
    return SpanInfo(raw.trace_id, raw.span_id, raw.parent_id, raw.name, UNKNOWN_KIND, raw.start, raw.end,
                    raw.service, "", "", "", "", (), (), (), None, None, None, None,
                    _filter_attrs(raw.attributes, filter_keys), raw.where)
