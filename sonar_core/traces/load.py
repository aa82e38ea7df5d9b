"""Span files in, a run's dataset out: read, read through the convention, group, select, map to rows.

The spans are streamed: each line (or protobuf message) is decoded, each span read through its
convention into a small :class:`~.spans.SpanInfo` (:mod:`.mapping`, in worker processes when
``traces.workers`` asks for them, or the files are large: :mod:`.parallel`), and grouped by trace in bounded
memory (:mod:`.grouping`, spilling under the output folder past ``limit`` spans). :class:`TraceRows` hands the
rows over one at a time; :func:`load_traces` holds them as the run's dataset. What cannot be used is counted by reason
(:class:`~.spans.Tally`); the counts become run.json's ``result.dataset.traces`` and, when any span was
skipped, a dataset problem of the run. When nothing at all can be read, or no row results, the load stops
with one line saying why.
"""

from __future__ import annotations

import gc
import hashlib
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..dataset import DATASET_FIELDS, LLMDataset, Row
from ..errors import DatasetError
from ..text_clean import clean_value, count_cleaned
from .files import read_units, resolve_files, trace_ends
from .grouping import DEFAULT_LIMIT, Grouper, TraceAssembler
from .mapping import SURROGATES
from .first_pass import shared_first_pass
from .parallel import Workers, mapped_units, worker_count
from .ranges import RangeSink
from .scopes import any_matched, session_record, span_records, trace_of, trace_record, trace_turn
from .selection import Selection
from .spec import TraceInput
from .spans import UNKNOWN_KIND, SpanInfo, SpanSkip, Tally

__all__ = ["TraceDataset", "TraceRows", "load_traces"]


@dataclass
class TraceDataset(LLMDataset):
    """The rows of a trace run, with what was read and skipped (run.json's ``result.dataset.traces``)."""

    traces: dict[str, Any] = field(default_factory=dict, compare=False)

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "traces": self.traces}


#: Row's list and mapping fields: where a trace row has no value, it shares one empty list (mapping) with every
#: other row instead of a new one each (nothing changes a row's lists after loading): a fifth of a row's memory.
#: ``attack`` (a red-team row's) is one of them.
_EMPTY_LISTS = ("context", "categories", "output_constraints", "corpus", "relationships", "conversation",
                "expected_tool_calls", "tools", "tool_results")
#: Span names whose one-name ``categories`` list rows share (a name repeats in every trace; a stream of distinct
#: names, past this many, gets a list per row).
_NAMES_SHARED = 10_000


class TraceRows:
    """The rows of one ``traces:`` setting, made as their traces complete: iterate once (:class:`~..dataset.Row`
    each), then :meth:`dataset` (or :meth:`finish`) says what was read and skipped. A row key seen before (a
    span id repeated across traces) is skipped and counted."""

    def __init__(self, spec: TraceInput, base_dir: str | None = None, spill_parent: Path | None = None,
                 limit: int = DEFAULT_LIMIT, workers: int | None = None) -> None:
        self.spec = spec
        self.files = resolve_files(spec.files, base_dir)
        self.spill_parent = spill_parent
        self.limit = limit
        #: The worker processes mapping spans (0: none; :func:`~.parallel.worker_count`).
        self.workers = worker_count(spec.workers if workers is None else workers, self.files)
        self.tally = Tally()
        self.digest = hashlib.sha256()
        self.columns: dict[str, None] = {}
        self.cleaned: dict[str, int] = {}
        self.rows = 0
        self._keys: set[str] = set()
        self._shared: dict[str, str] = {}
        self._categories: dict[str, list[str]] = {}
        empty: list = []
        self._empty: dict[str, Any] = {**{name: empty for name in _EMPTY_LISTS}, "simulated_user": {}, "attack": {}}

    def __iter__(self) -> Iterator[Row]:
        for record, where in self._records():
            row = self._row(record, where)
            if row is not None:
                yield row

    def _row(self, record: dict[str, Any], where: str) -> Row | None:
        key = record["test_case_key"]
        if key in self._keys:
            self.tally.skip_spans(where, SpanSkip("duplicate span id", f"{key} is already a row"))
            return None
        if self.tally.surrogates:  # text no UTF-8 file can hold (docs/reliability.md), cleaned as a dataset's is
            for name, value in record.items():
                if isinstance(value, (str, list)):
                    record[name], changed = clean_value(value)
                    count_cleaned(self.cleaned, name, changed)
        model = record["model_key"] = self._shared.setdefault(record["model_key"], record["model_key"])
        categories = record.get("categories")
        if categories and len(categories) == 1:  # a span name: one list per name, not one per row
            shared = self._categories.get(categories[0])
            if shared is not None:
                record["categories"] = shared
            elif len(self._categories) < _NAMES_SHARED:
                self._categories[categories[0]] = categories
        self._keys.add(key)
        columns = self.columns
        for name in record:
            if name not in columns and name in DATASET_FIELDS:
                columns[name] = None
        self.rows += 1
        return Row(key=f"{key}::{model}", **{**self._empty, **record})

    def _records(self) -> Iterator[tuple[dict[str, Any], str]]:
        """``(record, where)`` per row, in order: traces as they complete, sessions at the end."""
        spec, tally, selection = self.spec, self.tally, Selection(self.spec)
        with (Workers(self.workers, spec, selection.filter_keys) if self.workers else nullcontext()) as workers:
            sink = RangeSink() if workers is not None else None
            ends = shared_first_pass(self.files, workers, sink) if workers is not None else None
            if ends is None:
                ends = trace_ends(self.files, sink)
            if sink is not None and sink.usable:  # the workers read the lines themselves (traces/ranges.py)
                tally.files += [str(path) for path in self.files]
                tally.lines_read = sink.units
                self.digest = sink.digest
                units = workers.ordered(sink.ranges)
            else:
                units = mapped_units(read_units(self.files, tally, self.digest), spec, selection.filter_keys, workers)
            yield from self._assembled(units, ends, selection)

    def _assembled(self, units, ends: dict[str, int], selection: Selection) -> Iterator[tuple[dict[str, Any], str]]:
        """The rows of the mapped ``units``."""
        spec, tally = self.spec, self.tally
        with TraceAssembler(ends, self.spill_parent, self.limit) as assembler, \
                Grouper(self.spill_parent, self.limit, ".sonar-sessions-") as sessions:
            for trace_id, spans in _traces(units, tally, assembler):
                tally.traces += 1
                trace = trace_of(trace_id, spans, tally)
                where = f"{trace.spans[0].where.rsplit(': ', 1)[0]}: trace {trace_id}"
                if spec.scope == "span":
                    for span, record in span_records(trace, selection, spec.model_key, tally):
                        yield record, f"{where}, span {span.span_id}"
                    continue
                if trace.root is None:
                    known = sum(1 for s in trace.spans if s.kind != UNKNOWN_KIND)
                    if known:
                        tally.skip_spans(where, SpanSkip("trace has no root", f"none of its {len(trace.spans)} "
                                                                              f"span(s) is a root (all have a parent)"),
                                         known)
                    continue
                if spec.scope == "trace":
                    if not selection.keeps_trace(trace.spans):
                        tally.filtered_out += 1
                    elif not selection.sampled(trace.trace_id):
                        tally.sampled_out += 1
                    elif (record := trace_record(trace, spec.model_key)) is not None:
                        yield record, where
                    continue
                found = trace_turn(trace, selection)
                if found is None:
                    continue
                session, turn = found
                if not session:
                    tally.skip_spans(where, SpanSkip("no session id", "no span has session.id or "
                                                                      "gen_ai.conversation.id"),
                                     sum(1 for s in trace.spans if s.kind != UNKNOWN_KIND))
                    continue
                sessions.add(session, turn)
            for session, turns in sessions.groups():
                tally.sessions += 1
                if not any_matched(turns):
                    tally.filtered_out += 1
                elif not selection.sampled(session):
                    tally.sampled_out += 1
                else:
                    yield session_record(session, turns, spec.model_key), f"session {session[:80]}"

    def finish(self) -> dict[str, Any]:
        """After the rows: run.json's ``result.dataset.traces``; a DatasetError when no span could be read, or
        no row resulted."""
        spec, tally = self.spec, self.tally
        source = ", ".join(spec.files)
        skipped = sum(tally.spans_skipped.values())
        if tally.spans_read == 0:
            raise DatasetError(f"{self.files[0] if len(self.files) == 1 else source}: no span could be read "
                               f"({tally.first_problem()})")
        tally.rows = self.rows
        if not self.rows:
            reasons = ", ".join(f"{n} {reason}" for reason, n in tally.spans_skipped.most_common(3))
            why = (f"{skipped} skipped ({reasons}); first: {tally.first_problem()}" if skipped == tally.spans_read
                   else f"{tally.filtered_out} left out by the filters, {tally.sampled_out} by sampling"
                   + (f", {skipped} span(s) skipped ({reasons})" if skipped else ""))
            raise DatasetError(f"{source}: no rows at {spec.scope} scope from {tally.spans_read} span(s) in "
                               f"{tally.traces} trace(s): {why}")
        return tally.summary(spec.scope)

    def dataset(self, rows: list[Row]) -> TraceDataset:
        """``rows`` (this reader's, all of them) as the run's dataset."""
        traces = self.finish()
        return TraceDataset(rows=rows, source=", ".join(self.spec.files), columns=list(self.columns),
                            fingerprint=self.digest.hexdigest(), cleaned=self.cleaned, traces=traces)


def load_traces(spec: TraceInput, base_dir: str | None = None, spill_parent: Path | None = None,
                limit: int = DEFAULT_LIMIT, workers: int | None = None) -> TraceDataset:
    """The rows ``spec`` describes, held. ``spill_parent``: where spans are spilled past ``limit`` (a temporary
    folder in it, removed before returning; None holds every span in memory). ``workers``: processes that map
    spans (default: ``spec.workers``; :mod:`.parallel`).

    Raises:
        DatasetError: a file is missing or unreadable, no span can be read, or no row results.
    """
    collecting = gc.isenabled()
    gc.disable()  # millions of small acyclic objects: see dataset.load_dataset
    try:
        reader = TraceRows(spec, base_dir, spill_parent, limit, workers)
        return reader.dataset(list(reader))
    finally:
        if collecting:
            gc.enable()


def _traces(units, tally: Tally, assembler: TraceAssembler) -> Iterator[tuple[str, list[SpanInfo]]]:
    """``(trace id, spans)`` per trace, each as soon as its last span has been read: the events of the mapped
    units (:mod:`.mapping`) replayed in order."""
    unit = 0
    for events, spans_read in units:
        tally.spans_read += spans_read
        for event in events:
            kind = type(event)
            if kind is SpanInfo:
                if unit != assembler.unit:
                    yield from assembler.advance(unit)
                if event.end > tally.last_end:
                    tally.last_end = event.end
                if not assembler.add(event.trace_id, unit, event):
                    tally.skip_spans(f"{event.where}, span {event.span_id}", SpanSkip(
                        "span after its trace", f"trace {event.trace_id} was complete when this span was read"))
            elif kind is int:
                unit = event
            elif event == SURROGATES:
                tally.surrogates = True
            elif event[0] == "line":
                tally.skip_line(event[1], SpanSkip(event[2], event[3]))
            else:
                tally.skip_spans(event[1], SpanSkip(event[2], event[3]))
    yield from assembler.rest()
