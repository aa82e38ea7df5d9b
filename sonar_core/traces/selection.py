"""Which spans, traces and sessions become rows: the filters and the seeded sample.

A span matches when its kind is one of ``span_kinds`` (at span scope: LLM when none are given), its
name matches one of the ``span_names`` patterns (``fnmatch``, case-sensitive), and it has every
attribute of ``attributes`` with that value (compared as text). At trace (session) scope a trace
(session) is kept when one of its spans matches.

Sampling keeps a unit (span, trace or session) when ``hash(seed, id) < rate``: a unit's fate depends on
its id and the seed alone, not on the order or the other units, so the same files and seed give the
same rows, and a larger rate keeps a superset.
"""

from __future__ import annotations

import fnmatch
import hashlib

from .spec import TraceInput
from .spans import UNKNOWN_KIND, SpanInfo

__all__ = ["Selection"]

_SCALE = float(1 << 64)


class Selection:
    """The filters and the sample of one ``traces:`` setting."""

    def __init__(self, spec: TraceInput) -> None:
        self.scope = spec.scope
        given = frozenset(spec.span_kinds)
        self.kinds = spec.row_kinds() if spec.scope == "span" else given
        self.names = tuple(spec.span_names)
        self.attributes = dict(spec.attributes)
        self.rate = spec.sample_rate
        self.seed = spec.seed
        #: Whether trace and session scope filter at all.
        self.filtering = bool(given or self.names or self.attributes)

    @property
    def filter_keys(self) -> tuple[str, ...]:
        """The attributes a span must keep for the filters."""
        return tuple(self.attributes)

    def matches(self, span: SpanInfo) -> bool:
        if self.kinds and span.kind not in self.kinds:
            return False
        if self.names and not any(fnmatch.fnmatchcase(span.name, pattern) for pattern in self.names):
            return False
        return all(span.attrs.get(key) == value for key, value in self.attributes.items())

    def row_span(self, span: SpanInfo) -> bool:
        """At span scope: whether this span is a row candidate (before sampling)."""
        return span.kind != UNKNOWN_KIND and self.matches(span)

    def keeps_trace(self, spans: list[SpanInfo]) -> bool:
        """At trace or session scope: whether this trace passes the filters."""
        return not self.filtering or any(self.matches(span) for span in spans)

    def sampled(self, unit_id: str) -> bool:
        """Whether the unit with this id is in the sample."""
        if self.rate >= 1:
            return True
        digest = hashlib.blake2b(f"{self.seed}:{unit_id}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return int.from_bytes(digest, "big") < self.rate * _SCALE
