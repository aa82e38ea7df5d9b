"""The shapes a span takes on its way to a row, and the tally of what was skipped.

* :class:`RawSpan`: one OTLP span as read (ids in lowercase hex, times in ns since the epoch,
  attributes as Python values), whichever encoding it came in (:mod:`.otlp_json`, :mod:`.otlp_proto`);
* :class:`SpanInfo`: the span read through its convention (:mod:`.openinference`, :mod:`.genai`):
  only what rows are made of, small enough to spill to disk by the thousand (:mod:`.grouping`);
* :class:`SpanSkip`: why a span (or a line, or a message) could not be used; :class:`Tally` counts them by
  reason, keeps a few examples, and becomes the ``traces`` part of run.json's dataset summary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["RawSpan", "SpanInfo", "SpanSkip", "Tally", "UNKNOWN_KIND"]

#: The kind of a span of neither convention: kept only as a node of its trace's tree (its ids and times).
UNKNOWN_KIND = "UNKNOWN"
#: Examples kept per reason.
_EXAMPLES = 3


@dataclass(slots=True)
class RawSpan:
    """One span as the OTLP file held it."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    #: Start and end, in nanoseconds since the Unix epoch.
    start: int
    end: int
    attributes: dict[str, Any]
    #: The span's events that carry GenAI content: ``(name, attributes)``.
    events: list[tuple[str, dict[str, Any]]]
    #: The resource's ``service.name`` ("" when it has none).
    service: str
    #: File and line (or message) it came from, for messages.
    where: str
    #: The number of that line or message among all read (from 1): when the span arrived.
    unit: int = 0


class SpanInfo(NamedTuple):
    """A span read through its convention: what a row needs of it."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    #: An OpenInference span kind (LLM, RETRIEVER, TOOL, AGENT, CHAIN, ...), or UNKNOWN_KIND.
    kind: str
    start: int
    end: int
    service: str
    #: The model asked (request model, else response model); "" when the span names none.
    model: str
    #: ``session.id`` / ``gen_ai.conversation.id``; "" when absent.
    session: str
    #: The span's input and output as text (a JSON wrapper around one question or answer unwrapped).
    input: str
    output: str
    #: The messages sent (conversation turns) and the reply (assistant turns), for LLM spans.
    messages: tuple
    reply: tuple
    #: Retrieved documents' text, for retriever spans.
    documents: tuple
    #: A tool span's call: ``(name, arguments dict, result text, call id)``; None for other kinds.
    tool: tuple | None
    tokens_in: int | None
    tokens_out: int | None
    #: USD, when the span records it.
    cost: float | None
    #: The attributes the run's filters name (key -> text), and nothing else.
    attrs: dict
    where: str
    #: Which convention read it: ``openinference``, ``genai`` or "" (unknown).
    convention: str = ""

    @property
    def seconds(self) -> float:
        return (self.end - self.start) / 1e9


class SpanSkip(Exception):
    """A span, line or message that cannot be used: ``reason`` (a short, countable phrase) and ``detail``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class Tally:
    """What was read and what was skipped, by reason."""

    files: list[str] = field(default_factory=list)
    lines_read: int = 0
    spans_read: int = 0
    #: Reason -> lines (or protobuf messages) skipped whole; their spans could not be counted.
    lines_skipped: Counter = field(default_factory=Counter)
    #: Reason -> spans skipped.
    spans_skipped: Counter = field(default_factory=Counter)
    #: Reason -> the first few ``where: detail`` messages.
    examples: dict[str, list[str]] = field(default_factory=dict)
    traces: int = 0
    sessions: int = 0
    #: Units (spans, traces or sessions) the filters left out, and those sampling left out.
    filtered_out: int = 0
    sampled_out: int = 0
    rows: int = 0
    #: The latest end of a span read (ns since the epoch): the time the write-back stamps on its spans.
    last_end: int = 0
    #: Whether a text read may hold lone surrogates (a JSON escape such as "\ud800"): rows are then cleaned.
    surrogates: bool = False

    def _example(self, reason: str, where: str, detail: str) -> None:
        kept = self.examples.setdefault(reason, [])
        if len(kept) < _EXAMPLES:
            kept.append(f"{where}: {detail}" if detail else where)

    def skip_line(self, where: str, skip: SpanSkip) -> None:
        self.lines_skipped[skip.reason] += 1
        self._example(skip.reason, where, skip.detail)

    def skip_spans(self, where: str, skip: SpanSkip, count: int = 1) -> None:
        self.spans_skipped[skip.reason] += count
        self._example(skip.reason, where, skip.detail)

    def mark_surrogates(self) -> None:
        self.surrogates = True

    def summary(self, scope: str) -> dict[str, Any]:
        """run.json's ``result.dataset.traces`` (docs/result-directory.md)."""
        return {
            "files": list(self.files), "scope": scope, "lines_read": self.lines_read, "spans_read": self.spans_read,
            "spans_skipped": dict(sorted(self.spans_skipped.items())),
            "lines_skipped": dict(sorted(self.lines_skipped.items())),
            "skip_examples": {reason: list(found) for reason, found in sorted(self.examples.items())},
            "traces": self.traces, "sessions": self.sessions, "filtered_out": self.filtered_out,
            "sampled_out": self.sampled_out, "rows": self.rows, "last_end_unix_nano": self.last_end,
        }

    def first_problem(self) -> str:
        """The first example message, for an error when nothing could be read."""
        for found in self.examples.values():
            if found:
                return found[0]
        return "no spans"
