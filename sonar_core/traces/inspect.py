"""``sonar traces inspect``: what span files hold, before a run: spans by convention and kind, traces,
sessions, models, services, the time they span, and what would be skipped and why.

It reads every span once (streamed) and keeps only counts and the set of trace and session ids.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .convention import read_span
from .mapping import raw_spans
from .spans import SpanSkip, Tally

__all__ = ["inspect_spans"]


def _time(ns: int | None) -> str | None:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat(timespec="seconds")


def inspect_spans(files: list[Path], max_attribute_chars: int = 1_000_000) -> dict[str, Any]:
    """Counts over every span of ``files`` (docs/traces.md, ``sonar traces inspect --json``)."""
    tally = Tally()
    kinds: Counter = Counter()
    models: Counter = Counter()
    services: Counter = Counter()
    traces: set[str] = set()
    sessions: set[str] = set()
    roots = 0
    first = last = None
    for raw in raw_spans(files, tally, hashlib.sha256(), max_attribute_chars):
        traces.add(raw.trace_id)
        roots += not raw.parent_id
        first = raw.start if first is None else min(first, raw.start)
        last = raw.end if last is None else max(last, raw.end)
        if raw.service:
            services[raw.service] += 1
        try:
            info = read_span(raw)
        except SpanSkip as skip:
            tally.skip_spans(f"{raw.where}, span {raw.span_id}", skip)
            continue
        kinds[f"{info.convention}/{info.kind}"] += 1
        if info.kind == "LLM" and info.model:
            models[info.model] += 1
        if info.session:
            sessions.add(info.session)
    return {
        "files": tally.files, "lines_read": tally.lines_read, "spans_read": tally.spans_read,
        "spans_by_kind": dict(sorted(kinds.items())), "traces": len(traces), "root_spans": roots,
        "sessions": len(sessions), "llm_models": dict(models.most_common()), "services": dict(services.most_common()),
        "first_start": _time(first), "last_end": _time(last),
        "spans_skipped": dict(sorted(tally.spans_skipped.items())),
        "lines_skipped": dict(sorted(tally.lines_skipped.items())),
        "skip_examples": {reason: list(found) for reason, found in sorted(tally.examples.items())},
    }
