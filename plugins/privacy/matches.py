"""What the privacy pattern suites share: a match record, masking, overlap resolution, splicing.

Both the PII suite (:mod:`.pii_patterns`) and the secret suite (:mod:`.secret_patterns`)
report what they found as :class:`TextMatch` records whose ``masked`` text keeps just
enough characters to recognise the leak in a report without repeating it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, TypeVar

__all__ = ["Span", "TextMatch", "mask_middle", "keep_non_overlapping", "splice"]


class Span(Protocol):
    """Anything that covers ``text[start:end]`` (character offsets)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


S = TypeVar("S", bound=Span)


@dataclass(frozen=True)
class TextMatch:
    """One detected leak.

    Attributes:
        kind: what was found (``credit_card``, ``email``, ``aws_access_key_id``...).
        start: offset of the first character of the match in the searched text (characters).
        end: offset just past the last character (characters), so ``text[start:end]``.
        masked: the match with most characters replaced by ``*``; safe to show.
    """

    kind: str
    start: int
    end: int
    masked: str

    def as_detail(self) -> dict[str, str]:
        """The JSON-serialisable form used in a row's details."""
        return {"kind": self.kind, "masked": self.masked}


def mask_middle(value: str, keep_start: int, keep_end: int, fill: str = "*") -> str:
    """``value`` with all but its first ``keep_start`` and last ``keep_end`` characters hidden.

    Characters in ``value`` that are not letters or digits (separators such as ``-``, ``.``,
    spaces) are kept where they are, so the shape of the value stays readable. When the value
    is too short to keep both ends and still hide something, only the first character is kept.
    """
    if keep_start + keep_end >= len(value):
        keep_start, keep_end = min(1, len(value)), 0
    out = []
    last_hidden = len(value) - keep_end
    for i, ch in enumerate(value):
        if i < keep_start or i >= last_hidden or not ch.isalnum():
            out.append(ch)
        else:
            out.append(fill)
    return "".join(out)


def _same_rank(_item: object) -> int:
    return 0


def keep_non_overlapping(candidates: Iterable[S], rank: Callable[[S], int] = _same_rank) -> list[S]:
    """The candidates that overlap no better candidate, sorted by start offset.

    Candidates are anything with ``start`` and ``end`` offsets (end exclusive). They are
    taken in order of ``rank(candidate)`` (lower first; by default all rank the same), then
    by start, then longest first; a candidate that overlaps one already kept is dropped.
    This is how one span is reported once, under its most specific kind (an IBAN's digits
    are not also a phone number), and how a decoded hex run keeps its place against a base64
    reading of the same characters.
    """
    ordered = sorted(candidates, key=lambda c: (rank(c), c.start, c.start - c.end))
    starts: list[int] = []
    kept: list[S] = []  # sorted by start, pairwise disjoint
    for candidate in ordered:
        i = bisect.bisect_left(starts, candidate.start)
        # Kept spans are disjoint, so only the neighbours on each side can overlap.
        if i > 0 and kept[i - 1].end > candidate.start:
            continue
        if i < len(kept) and kept[i].start < candidate.end:
            continue
        starts.insert(i, candidate.start)
        kept.insert(i, candidate)
    return kept


def splice(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with ``text[start:end]`` replaced by ``replacement`` for each span.

    ``spans`` are ``(start, end, replacement)`` with character offsets into ``text``,
    disjoint and sorted by start (as :func:`keep_non_overlapping` returns them).
    """
    pieces: list[str] = []
    at = 0
    for start, end, replacement in spans:
        pieces.append(text[at:start])
        pieces.append(replacement)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
