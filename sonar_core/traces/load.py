"""Span files in, a run's dataset out: read, read through the convention, group, select, map to rows.

The spans are streamed: each line (or protobuf message) is decoded, each span read through its
convention into a small :class:`~.spans.SpanInfo`, and grouped by trace in bounded memory
(:mod:`.grouping`, spilling under the output folder past ``limit`` spans). Only rows are held whole.
What cannot be used is counted by reason (:class:`~.spans.Tally`); the counts become run.json's
``result.dataset.traces`` and, when any span was skipped, a dataset problem of the run. When nothing
at all can be read, or no row results, the load stops with one line saying why.
"""

from __future__ import annotations

import gc
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..dataset import DATASET_FIELDS, LLMDataset, Row
from ..errors import DatasetError
from ..text_clean import clean_value, count_cleaned
from .convention import read_span, skeleton
from .files import read_spans, resolve_files, trace_ends
from .grouping import DEFAULT_LIMIT, Grouper, TraceAssembler
from .scopes import session_record, slim, span_records, trace_of, trace_record, trace_turn
from .selection import Selection
from .spec import TraceInput
from .spans import SpanSkip, Tally

__all__ = ["TraceDataset", "load_traces"]


@dataclass
class TraceDataset(LLMDataset):
    """The rows of a trace run, with what was read and skipped (run.json's ``result.dataset.traces``)."""

    traces: dict[str, Any] = field(default_factory=dict, compare=False)

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "traces": self.traces}


class _Rows:
    """Records made into rows as they come (their fields are Row's, their turns a conversation's by
    construction, which a test checks against the dataset loader's validation); a row key seen before
    (a span id repeated across traces) is skipped and counted."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.rows: list[Row] = []
        self.columns: dict[str, None] = {}
        self.keys: set[str] = set()
        self.shared: dict[str, str] = {}
        self.cleaned: dict[str, int] = {}

    def add(self, record: dict[str, Any], where: str) -> None:
        if record["test_case_key"] in self.keys:
            self.tally.skip_spans(where, SpanSkip("duplicate span id", f"{record['test_case_key']} is already a row"))
            return
        if self.tally.surrogates:  # text no UTF-8 file can hold (docs/reliability.md), cleaned as a dataset's is
            for name, value in record.items():
                if isinstance(value, (str, list)):
                    record[name], changed = clean_value(value)
                    count_cleaned(self.cleaned, name, changed)
        model = record["model_key"] = self.shared.setdefault(record["model_key"], record["model_key"])
        self.keys.add(record["test_case_key"])
        for name in record:
            if name in DATASET_FIELDS:
                self.columns.setdefault(name)
        self.rows.append(Row(key=f"{record['test_case_key']}::{model}", **record))


def load_traces(spec: TraceInput, base_dir: str | None = None, spill_parent: Path | None = None,
                limit: int = DEFAULT_LIMIT) -> TraceDataset:
    """The rows ``spec`` describes. ``spill_parent``: where spans are spilled past ``limit`` (a temporary
    folder in it, removed before returning; None holds every span in memory).

    Raises:
        DatasetError: a file is missing or unreadable, no span can be read, or no row results.
    """
    collecting = gc.isenabled()
    gc.disable()  # millions of small acyclic objects: see dataset.load_dataset
    try:
        return _load(spec, base_dir, spill_parent, limit)
    finally:
        if collecting:
            gc.enable()


def _load(spec: TraceInput, base_dir: str | None, spill_parent: Path | None, limit: int) -> TraceDataset:
    files = resolve_files(spec.files, base_dir)
    tally, digest, selection = Tally(), hashlib.sha256(), Selection(spec)
    keys = selection.filter_keys
    rows = _Rows(tally)
    with TraceAssembler(trace_ends(files), spill_parent, limit) as assembler, \
            Grouper(spill_parent, limit, ".sonar-sessions-") as sessions:
        for trace_id, spans in _traces(files, spec, tally, digest, keys, assembler):
            tally.traces += 1
            trace = trace_of(trace_id, spans, tally)
            where = f"{trace.spans[0].where.rsplit(': ', 1)[0]}: trace {trace_id}"
            if spec.scope == "span":
                for span, record in span_records(trace, selection, spec.model_key, tally):
                    rows.add(record, f"{where}, span {span.span_id}")
                continue
            if trace.root is None:
                known = sum(1 for s in trace.spans if s.kind != "UNKNOWN")
                if known:
                    tally.skip_spans(where, SpanSkip("trace has no root", f"none of its {len(trace.spans)} span(s) "
                                                                          f"is a root (all have a parent)"), known)
                continue
            if spec.scope == "trace":
                _add_trace(trace, selection, spec, tally, rows, where)
                continue
            found = trace_turn(trace, selection)
            if found is None:
                continue
            session, turn = found
            if not session:
                tally.skip_spans(where, SpanSkip("no session id", "no span has session.id or gen_ai.conversation.id"),
                                 sum(1 for s in trace.spans if s.kind != "UNKNOWN"))
                continue
            sessions.add(session, turn)
        for session, turns in sessions.groups():
            tally.sessions += 1
            if not any(turn.matched for turn in turns):
                tally.filtered_out += 1
            elif not selection.sampled(session):
                tally.sampled_out += 1
            else:
                rows.add(session_record(session, turns, spec.model_key), f"session {session[:80]}")
    return _dataset(spec, files, tally, digest, rows)


def _traces(files: list[Path], spec: TraceInput, tally: Tally, digest, keys: tuple[str, ...],
            assembler: TraceAssembler):
    """``(trace id, spans)`` per trace, each as soon as its last span has been read."""
    for raw in read_spans(files, tally, digest, spec.max_attribute_chars):
        tally.last_end = max(tally.last_end, raw.end)
        try:
            info = read_span(raw, keys)
        except SpanSkip as skip:
            tally.skip_spans(f"{raw.where}, span {raw.span_id}", skip)
            info = skeleton(raw, keys)
        yield from assembler.add(info.trace_id, raw.unit, info if spec.scope == "span" else slim(info))
        for late in assembler.late:
            tally.skip_spans(f"{late.where}, span {late.span_id}", SpanSkip(
                "span after its trace", f"trace {late.trace_id} was complete when this span was read"))
        assembler.late.clear()
    yield from assembler.rest()


def _add_trace(trace, selection: Selection, spec: TraceInput, tally: Tally, rows: _Rows, where: str) -> None:
    if not selection.keeps_trace(trace.spans):
        tally.filtered_out += 1
    elif not selection.sampled(trace.trace_id):
        tally.sampled_out += 1
    elif (record := trace_record(trace, spec.model_key)) is not None:
        rows.add(record, where)


def _dataset(spec: TraceInput, files: list[Path], tally: Tally, digest, rows: _Rows) -> TraceDataset:
    source = ", ".join(spec.files)
    skipped = sum(tally.spans_skipped.values())
    if tally.spans_read == 0:
        raise DatasetError(f"{files[0] if len(files) == 1 else source}: no span could be read "
                           f"({tally.first_problem()})")
    tally.rows = len(rows.rows)
    if not rows.rows:
        reasons = ", ".join(f"{n} {reason}" for reason, n in tally.spans_skipped.most_common(3))
        why = (f"{skipped} skipped ({reasons}); first: {tally.first_problem()}" if skipped == tally.spans_read
               else f"{tally.filtered_out} left out by the filters, {tally.sampled_out} by sampling"
               + (f", {skipped} span(s) skipped ({reasons})" if skipped else ""))
        raise DatasetError(f"{source}: no rows at {spec.scope} scope from {tally.spans_read} span(s) in "
                           f"{tally.traces} trace(s): {why}")
    return TraceDataset(rows=rows.rows, source=source, columns=list(rows.columns), fingerprint=digest.hexdigest(),
                        cleaned=rows.cleaned, traces=tally.summary(spec.scope))
