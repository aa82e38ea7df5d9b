"""Units to spans: a unit (a JSON line, a request, a protobuf message) decoded and its spans read through their
convention. This needs no other unit, so it can run in other processes (:mod:`.parallel`); what it finds is
written as an event list that :mod:`.load` replays in order:

* an ``int``: a unit begins (its number);
* a :class:`~.spans.SpanInfo`: a span read through its convention (or a skeleton: a span of none);
* ``("line", where, reason, detail)``, ``("span", where, reason, detail)``: a line or a span skipped;
* :data:`SURROGATES`: a text read from here on may hold lone surrogates (it came through the standard parser).

Replayed, the events tell the :class:`~.spans.Tally` what reading the units one at a time would have told it,
in the same order: a run's rows, counts and examples are the same whichever process mapped its units.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from .convention import read_span, skeleton
from .files import BROKEN, LINE, LONG_LINE, MAX_LINE_BYTES, MESSAGE, REQUEST, read_units
from .otlp_fast import fast_spans
from .otlp_json import spans_of_request
from .scopes import slim
from .spans import RawSpan, SpanSkip, Tally

try:  # twice as fast on large files; json (below) still reads what it refuses (NaN, lone surrogates)
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson comes with the traces extra
    _fast_loads = None

__all__ = ["EventLog", "map_units", "raw_spans", "SURROGATES"]

SURROGATES = "surrogates"


class EventLog:
    """Stands in for the :class:`~.spans.Tally` where units are mapped: what the Tally would be told, as events."""

    __slots__ = ("events", "spans_read")

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.spans_read = 0

    def skip_line(self, where: str, skip: SpanSkip) -> None:
        self.events.append(("line", where, skip.reason, skip.detail))

    def skip_spans(self, where: str, skip: SpanSkip, count: int = 1) -> None:
        self.events.append(("span", where, skip.reason, skip.detail))

    def mark_surrogates(self) -> None:
        self.events.append(SURROGATES)


def _decode(line: bytes, log) -> Any:
    """One line's JSON; a line only the standard parser reads may hold lone surrogates, and ``log`` says so."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:
            pass
    value = json.loads(line)
    log.mark_surrogates()
    return value


def unit_spans(what: str, payload: Any, where: str, log, limit: int) -> Iterator[RawSpan]:
    """The readable spans of one unit (:func:`~.files.read_units`); ``log`` (a Tally or an EventLog) is told what
    cannot be read."""
    if what == LINE:
        fast = fast_spans(payload, where, limit) if _fast_loads is not None else None
        if fast is not None:  # the usual line (otlp_fast); what it gives is what the general reading below gives
            items, log.spans_read = fast[0], log.spans_read + fast[1]
            for item in items:
                if type(item) is tuple:
                    log.skip_spans(*item)
                else:
                    yield item
            return
        try:
            payload = _decode(payload, log)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            reason = "truncated line" if not payload.endswith(b"\n") else "malformed JSON"
            log.skip_line(where, SpanSkip(reason, str(exc).splitlines()[0][:120]))
            return
        except RecursionError:
            log.skip_line(where, SpanSkip("malformed JSON", "nested too deeply"))
            return
    elif what == REQUEST:
        log.mark_surrogates()  # a whole .json file is read by the standard parser
    elif what == MESSAGE:
        from .otlp_proto import spans_of_message

        yield from spans_of_message(payload, where, log, limit)
        return
    elif what == LONG_LINE:
        log.skip_line(where, SpanSkip("line too long", f"over {MAX_LINE_BYTES:,} bytes"))
        return
    else:
        assert what == BROKEN, what
        log.skip_line(where, SpanSkip(*payload))
        return
    try:
        yield from spans_of_request(payload, where, log, limit)
    except SpanSkip as skip:
        log.skip_line(where, skip)


def map_units(units: Iterable[tuple[int | None, str, str, Any]], limit: int, filter_keys: tuple[str, ...],
              slim_llm: bool) -> tuple[list[Any], int]:
    """The events of ``units`` (above) and the number of spans they held. ``slim_llm``: LLM calls keep only what a
    trace row needs of their messages (:func:`~.scopes.slim`)."""
    log = EventLog()
    events = log.events
    for unit, where, what, payload in units:
        if unit is not None:
            events.append(unit)
        for raw in unit_spans(what, payload, where, log, limit):
            try:
                info = read_span(raw, filter_keys)
            except SpanSkip as skip:
                log.skip_spans(f"{raw.where}, span {raw.span_id}", skip)
                info = skeleton(raw, filter_keys)
            events.append(slim(info) if slim_llm else info)
    return events, log.spans_read


def raw_spans(files: list[Path], tally: Tally, digest, limit: int) -> Iterator[RawSpan]:
    """Every readable span of ``files``, in file order; what cannot be read is counted in ``tally``."""
    for _, where, what, payload in read_units(files, tally, digest):
        yield from unit_spans(what, payload, where, tally, limit)
