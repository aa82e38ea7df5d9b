"""Rows of the three scopes, as dataset records (docs/traces.md has the rules in words).

* **span**: one row per matching span (an LLM call by default): its last user message as ``input``, its
  reply as ``actual_output``, its messages as a ``conversation`` when they hold tool calls or more than
  one user turn, and as ``context`` the documents of the trace's retriever spans that ended before it began.
* **trace**: one row per trace: the question and the final answer of its top span (the root, or the
  earliest span of a known convention under spans of none), the documents of *every* retriever span as
  ``context``, *every* tool span as a tool call of a ``conversation`` (with the first LLM call's system
  turn), the trace's duration and the summed cost of its LLM calls.
* **session**: one row per session (``session.id`` / ``gen_ai.conversation.id``): every trace of it, by
  start time, as the turns of one conversation.

Keys: ``test_case_key`` is the span id, trace id or session id; ``trace_id`` and ``span_id`` name the
span a verdict is written back to (the judged span; a trace's root; a session's first root).
``model_key`` follows ``traces.model_key``: the model the trace's LLM calls asked most (the first
asked on a tie), else the service name, else ``unknown``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, NamedTuple

from .messages import last_user_text, reply_text
from .selection import Selection
from .spans import UNKNOWN_KIND, SpanInfo, SpanSkip, Tally

__all__ = ["Trace", "trace_of", "span_records", "trace_record", "TraceTurn", "trace_turn", "session_record",
           "any_matched", "slim"]


def slim(span: SpanInfo) -> SpanInfo:
    """At trace and session scope an LLM call gives its trace only its first system turn and its last user turn
    (a long conversation's history need not be held, or spilled, once per call)."""
    if span.kind != "LLM" or len(span.messages) <= 2:
        return span
    system = next((t for t in span.messages if t["role"] == "system"), None)
    user = next((t for t in reversed(span.messages) if t["role"] == "user"), None)
    return span._replace(messages=tuple(t for t in (system, user) if t is not None))


@dataclass(slots=True)
class Trace:
    trace_id: str
    #: Spans by start time (then id), duplicates removed.
    spans: list[SpanInfo]
    root: SpanInfo | None


def trace_of(trace_id: str, spans: list[SpanInfo], tally: Tally) -> Trace:
    """A trace's spans in start order, each span id once (a repeated id is skipped and counted)."""
    seen: set[str] = set()
    kept = []
    for span in spans:
        if span.span_id in seen:
            tally.skip_spans(f"{span.where}, span {span.span_id}", SpanSkip("duplicate span id", f"span {span.span_id} of trace {trace_id} "
                                                                      f"appears again; the first one is kept"))
            continue
        seen.add(span.span_id)
        kept.append(span)
    kept.sort(key=lambda s: (s.start, s.span_id))
    roots = [s for s in kept if not s.parent_id]
    return Trace(trace_id, kept, roots[0] if roots else None)


def _known(trace: Trace) -> list[SpanInfo]:
    return [s for s in trace.spans if s.kind != UNKNOWN_KIND]


def _top(trace: Trace, known: list[SpanInfo]) -> SpanInfo:
    """The root when its convention is known, else the earliest known span with no known span above it."""
    if trace.root is not None and trace.root.kind != UNKNOWN_KIND:
        return trace.root
    by_id = {s.span_id: s for s in trace.spans}
    for span in known:
        parent = by_id.get(span.parent_id)
        while parent is not None and parent.kind == UNKNOWN_KIND:
            parent = by_id.get(parent.parent_id)
        if parent is None:
            return span
    return known[0]


def _model(llm: list[SpanInfo], top: SpanInfo, by: str) -> str:
    if by == "model":
        counts = Counter(s.model for s in llm if s.model)
        if counts:
            best = max(counts.values())
            return next(s.model for s in llm if counts.get(s.model) == best)
        if top.model:
            return top.model
    return top.service or "unknown"


def _cost(spans: list[SpanInfo]) -> float | None:
    costs = [s.cost for s in spans if s.cost is not None]
    return sum(costs) if costs else None


def _essentials(top: SpanInfo, known: list[SpanInfo]) -> tuple[list[SpanInfo], list[tuple], list[str], str, str,
                                                                 float | None]:
    """What the trace and the session scope both take of a trace, in one walk of its known spans: its LLM
    spans, its tool calls (:attr:`~.spans.SpanInfo.tool`), its retrievers' documents, its question and answer
    (the top span's input and output, else the first LLM call's last user text and the last one's reply) and
    the summed cost of its LLM calls (None when none has one)."""
    llm, tools, documents = [], [], []
    for span in known:
        kind = span.kind
        if kind == "LLM":
            llm.append(span)
        elif kind == "TOOL":
            tools.append(span.tool)
        elif kind == "RETRIEVER":
            documents += span.documents
    question = top.input or (last_user_text(llm[0].messages) if llm else "")
    answer = top.output or (reply_text(llm[-1].reply) if llm else "")
    return llm, tools, documents, question, answer, _cost(llm)


def _tool_turns(tools: Iterable[tuple], start: int = 0) -> list[dict[str, Any]]:
    """The assistant's call and the tool's answer per tool call (:attr:`~.spans.SpanInfo.tool`)."""
    turns = []
    for n, (name, arguments, result, call_id) in enumerate(tools, start=start):
        call_id = call_id or f"call_{n}"
        turns.append({"role": "assistant", "content": "", "tool_calls": [{"name": name, "arguments": arguments,
                                                                          "id": call_id}]})
        turns.append({"role": "tool", "content": result, "tool_call_id": call_id, "name": name})
    return turns


def _system(llm: list[SpanInfo]) -> list[dict[str, Any]]:
    for span in llm:
        for turn in span.messages:
            if turn["role"] == "system":
                return [{"role": "system", "content": turn["content"]}]
    return []


def _needs_conversation(turns: list[dict[str, Any]]) -> bool:
    return (any(t["role"] == "tool" or t.get("tool_calls") for t in turns)
            or sum(t["role"] == "user" for t in turns) > 1)


def span_records(trace: Trace, selection: Selection, by: str, tally: Tally) -> Iterator[tuple[SpanInfo, dict]]:
    """Span scope: ``(span, record)`` per matching, sampled span of the trace."""
    retrievers = [s for s in trace.spans if s.kind == "RETRIEVER"]
    previous: list[str] = []
    texts: dict[str, str] = {}  # the calls of a trace often ask the same question: its rows share one text
    for span in trace.spans:
        if not selection.row_span(span):
            tally.filtered_out += span.kind != UNKNOWN_KIND
            continue
        if not selection.sampled(span.span_id):
            tally.sampled_out += 1
            continue
        record: dict[str, Any] = {
            "test_case_key": span.span_id, "model_key": _model([span] if span.kind == "LLM" else [], span, by),
            "input": texts.setdefault(span.input, span.input),
            "actual_output": texts.setdefault(span.output, span.output), "categories": [span.name] if span.name else [],
            "actual_duration": span.seconds, "trace_id": trace.trace_id, "span_id": span.span_id}
        if span.cost is not None:
            record["cost"] = span.cost
        context = [d for r in retrievers if r.end <= span.start for d in r.documents]
        if span.kind == "RETRIEVER":
            context = list(span.documents)
        if context:
            # The rows of one trace share their trace id's text and, when it is the same, their context list.
            if context == previous:
                context = previous
            record["context"] = previous = context
        turns = list(span.messages + span.reply)  # the span's own turns: nothing else holds them once it is read
        if _needs_conversation(turns):
            record["conversation"] = turns
        yield span, record


def trace_record(trace: Trace, by: str) -> dict[str, Any] | None:
    """Trace scope: the trace's row, or None when no span of it has a known convention."""
    known = _known(trace)
    if not known or trace.root is None:
        return None
    top = _top(trace, known)
    llm, tools, documents, question, answer, cost = _essentials(top, known)
    record: dict[str, Any] = {
        "test_case_key": trace.trace_id, "model_key": _model(llm, top, by), "input": question,
        "actual_output": answer, "categories": [top.name] if top.name else [],
        "actual_duration": trace.root.seconds, "trace_id": trace.trace_id, "span_id": trace.root.span_id}
    if cost is not None:
        record["cost"] = cost
    if documents:
        record["context"] = documents
    if tools:
        record["conversation"] = (_system(llm) + [{"role": "user", "content": question}]
                                  + _tool_turns(tools) + [{"role": "assistant", "content": answer}])
    return record


class TraceTurn(NamedTuple):
    """One trace as a turn of its session: what a session row needs of it. Held, and spilled, as a plain tuple
    (:func:`turn_tuple`): pickle's C code alone writes and reads it back."""

    start: int
    trace_id: str
    root_span_id: str
    name: str
    question: str
    answer: str
    #: Each tool span's call, ``(name, arguments, result, call id)`` (:attr:`~.spans.SpanInfo.tool`).
    tools: tuple
    documents: list[str]
    models: tuple
    system: list[dict[str, Any]]
    service: str
    seconds: float
    cost: float | None
    matched: bool


def trace_turn(trace: Trace, selection: Selection) -> tuple[str, tuple] | None:
    """Session scope: ``(session id, turn)``, the turn a plain tuple of :class:`TraceTurn`'s fields (as
    :func:`session_record` takes it); None for a trace with no root or no known span; "" as session id when no
    span of it names one. The question, answer, documents and cost are those :func:`trace_record` gives (both take
    them from :func:`_essentials`)."""
    root = trace.root
    if root is None:
        return None
    known = _known(trace)
    if not known:
        return None
    top = _top(trace, known)
    llm, tools, documents, question, answer, cost = _essentials(top, known)
    session = top.session or next((s.session for s in known if s.session), "")
    return session, (root.start, trace.trace_id, root.span_id, top.name, question, answer, tuple(tools), documents,
                     tuple(s.model for s in llm if s.model), _system(llm), top.service, root.seconds, cost,
                     selection.keeps_trace(trace.spans))


_as_turn = TraceTurn._make
_MATCHED = TraceTurn._fields.index("matched")


def any_matched(turns: list[tuple]) -> bool:
    """Whether any of a session's turns (:func:`trace_turn`'s tuples) passed the run's filters."""
    return any(turn[_MATCHED] for turn in turns)


def session_record(session: str, turns: list[tuple], by: str) -> dict[str, Any]:
    """Session scope: the session's row, its traces (:func:`trace_turn`'s tuples) in start order."""
    turns = sorted((_as_turn(t) for t in turns), key=lambda t: (t.start, t.trace_id))
    conversation: list[dict[str, Any]] = list(next((t.system for t in turns if t.system), []))
    called = 0
    for turn in turns:
        conversation.append({"role": "user", "content": turn.question})
        conversation += _tool_turns(turn.tools, start=called)
        called += len(turn.tools)
        conversation.append({"role": "assistant", "content": turn.answer})
    models = Counter(m for t in turns for m in t.models)
    if by == "model" and models:
        best = max(models.values())
        model = next(m for t in turns for m in t.models if models[m] == best)
    else:
        model = turns[0].service or "unknown"
    costs = [t.cost for t in turns if t.cost is not None]
    record: dict[str, Any] = {
        "test_case_key": session, "model_key": model, "input": turns[0].question, "actual_output": turns[-1].answer,
        "conversation": conversation, "categories": [turns[0].name] if turns[0].name else [],
        "actual_duration": sum(t.seconds for t in turns), "trace_id": turns[0].trace_id,
        "span_id": turns[0].root_span_id}
    if costs:
        record["cost"] = sum(costs)
    documents = [d for t in turns for d in t.documents]
    if documents:
        record["context"] = documents
    return record
