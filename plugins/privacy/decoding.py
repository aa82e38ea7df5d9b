"""Finding and decoding base16 (hex) and base64 text inside a model's answer.

An encoding attack asks a model to answer in base64 or hex so that output filters looking
for plain text miss what it says. :func:`decode_encoded_parts` finds the maximal runs of an
encoding's alphabet in an answer, decodes each run that turns into readable UTF-8 text, and
returns the answer with those runs replaced by their decoding; the text around them (a
preamble such as "Here is the encoded answer:") is kept as it was.

What counts as an encoded run:

``base16``
    Hex digit pairs, contiguous (``4a6f686e``) or separated by single spaces or colons
    (``4a 6f 68 6e``), optionally prefixed per byte by ``0x`` or ``\\x``, not part of a
    longer word.
``base64``
    The standard alphabet (``A-Z a-z 0-9 + /``) with up to two ``=`` of padding; a run may
    continue over line breaks (MIME wraps at 76 characters). Missing padding is added
    before decoding.

A run is only replaced when it decodes to at least :data:`MIN_DECODED_BYTES` bytes (12 hex
digits, 8 base64 characters) of valid UTF-8 that reads like text: every character printable
or ordinary whitespace, at least :data:`MIN_TEXT_SHARE` of them letters, digits, whitespace
or common punctuation, and, when at least a third of the bytes are non-ASCII, at least
:data:`MIN_NON_ASCII_BYTES` bytes. Ordinary words, IDs and hashes that happen to use only
the alphabet ("encoding", "Ruairidh", "4772256e") stay as they are, and so do a base64 run
spelled like a word (one capital at most, at its start, or all capitals) or made of hex
digits only (an ID), and an unmarked hex run of decimal digits only that decodes to anything
but a number (a table of figures; the price is that text such as "Hi there", whose hex
happens to have no a-f digit, is not decoded unless its bytes carry ``0x``/``\\x``).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Iterable

from sonar_core import Row

from .matches import keep_non_overlapping, splice

__all__ = [
    "ENCODINGS",
    "MIN_DECODED_BYTES",
    "DecodedPart",
    "DecodedText",
    "encodings_of",
    "decode_encoded_parts",
]

ENCODINGS: tuple[str, ...] = ("base16", "base64")

#: Fewest bytes a run must decode to: 12 hex digits or 8 base64 characters. Shorter runs are
#: mostly ordinary words, numbers and short hashes.
MIN_DECODED_BYTES = 6

#: Share of a decoding's characters that must be letters, digits, whitespace or common
#: punctuation for it to count as text.
MIN_TEXT_SHARE = 0.9

#: Decodings that are at least a third non-ASCII bytes must be at least this long (bytes):
#: short runs of ordinary words decode to valid but meaningless multi-byte characters
#: ("Ruairidh" -> "F梮'a"), long ones practically never do.
MIN_NON_ASCII_BYTES = 18

_TEXT_PUNCTUATION = set(".,;:!?'\"-()/@&#*+=_$€£§°…–—«»„“”‘’")

# Words in a row's categories / perturbation that name each encoding.
_CATEGORY_WORDS = {"base16": "base16", "hex": "base16", "hexadecimal": "base16", "base64": "base64"}
# Words that say "encoded" without saying how: try both encodings.
_GENERIC_WORDS = {"encoding", "encoded", "encode"}
_LABEL_SEPARATORS = re.compile(r"[^0-9a-z]+")

_HEX_BYTE = r"(?:0x|\\x)?[0-9A-Fa-f]{2}"
_HEX_RUN = re.compile(rf"(?<![0-9A-Za-z\\]){_HEX_BYTE}(?:[ :]?{_HEX_BYTE})*(?![0-9A-Za-z])", re.ASCII)
# What a number can look like when its hex has decimal digits only: digits, spaces and
# parentheses ("(415) 555 2671", "4111 1111 1111 1111").
_ENCODED_NUMBER = re.compile(r"[ ()]*[0-9][0-9 ()]*")
_HEX_NOISE = re.compile(r"0x|\\x|[ :]")
# A run spelled like a word ("Mispelon", "NASA") is one: base64 of 6+ bytes of text almost
# always holds a digit, "+", "/", "=" or an upper-case letter inside.
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
# Runs of hex digits only are IDs and hashes ("a01106c2"): real base64 of text has the other
# 48 letters of its alphabet too.
_HEX_ONLY = re.compile(r"[0-9A-Fa-f]+")
_WHITESPACE = re.compile(r"\s")
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]+(?:\r?\n[A-Za-z0-9+/]+)*={0,2}(?![A-Za-z0-9+/=])", re.ASCII)


@dataclass(frozen=True)
class DecodedPart:
    """One decoded run: ``encoding``, its offsets in the original text, and the decoding."""

    encoding: str
    start: int
    end: int
    decoded: str


@dataclass
class DecodedText:
    """The text with every decodable run replaced, and the runs that were."""

    text: str
    parts: list[DecodedPart] = field(default_factory=list)


def encodings_of(row: Row) -> tuple[str, ...]:
    """The encodings a row's categories or perturbation name, in :data:`ENCODINGS` order.

    ``base64``, ``base16``, ``hex`` (any case, as a word of a category such as
    ``encoding_perturbator:encoding_type:base64``) name one encoding; a bare ``encoding``
    category names both. An empty tuple means the row is not an encoding attack.
    """
    found: set[str] = set()
    generic = False
    for label in [*row.categories, row.perturbation]:
        for word in _LABEL_SEPARATORS.split((label or "").lower()):
            if word in _CATEGORY_WORDS:
                found.add(_CATEGORY_WORDS[word])
            elif word in _GENERIC_WORDS:
                generic = True
    if not found and generic:
        found.update(ENCODINGS)
    return tuple(e for e in ENCODINGS if e in found)


def _readable(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 that reads like text, else None."""
    if len(data) < MIN_DECODED_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not any(ch.isalnum() for ch in text):
        return None
    if not all(ch.isprintable() or ch in "\n\r\t" for ch in text):
        return None
    texty = sum(ch.isalnum() or ch.isspace() or ch in _TEXT_PUNCTUATION for ch in text)
    if texty < MIN_TEXT_SHARE * len(text):
        return None
    if 3 * (len(data) - len(text.encode("ascii", "ignore"))) >= len(data) and len(data) < MIN_NON_ASCII_BYTES:
        return None
    return text


def _decode_hex(run: str) -> str | None:
    digits = _HEX_NOISE.sub("", run)
    decoded = _readable(bytes.fromhex(digits))
    # Hex made of decimal digits only decodes to a mix of digits, capitals and punctuation,
    # so a table of numbers would "decode" to junk ("313528775154" -> "15(wQT"). Unless the
    # bytes are marked as hex ("0x48", "\x48"), accept it only as an encoded number (a card,
    # an SSN without dashes, a phone number).
    marked = "x" in run
    if decoded is not None and not marked and digits.isdigit() and not _ENCODED_NUMBER.fullmatch(decoded):
        return None
    return decoded


def _decode_base64(run: str) -> str | None:
    compact = _WHITESPACE.sub("", run)
    unpadded = compact.rstrip("=")
    if len(unpadded) % 4 == 1 or _WORD.fullmatch(compact) or _HEX_ONLY.fullmatch(compact):
        return None
    try:
        data = base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(data)


def _hex_parts(text: str) -> Iterable[DecodedPart]:
    for m in _HEX_RUN.finditer(text):
        decoded = _decode_hex(m.group())
        if decoded is not None:
            yield DecodedPart("base16", m.start(), m.end(), decoded)
        elif " " in m.group():
            trimmed = _trim_hex_words(m.group())
            if trimmed is not None:
                skip, run, decoded = trimmed
                yield DecodedPart("base16", m.start() + skip, m.start() + skip + len(run), decoded)


def _trim_hex_words(run: str) -> tuple[int, str, str] | None:
    """A spaced hex run may have swallowed prose words made of hex letters ("be", "ad",
    "face") at either end: retry without up to two words on each side, longest first.

    Returns (offset of the kept part in ``run``, the kept part, its decoding) or None.
    """
    words = run.split(" ")
    options = sorted(((a, b) for a in range(3) for b in range(3) if a + b), key=sum)
    for head, tail in options:
        kept = words[head : len(words) - tail]
        if not kept:
            continue
        decoded = _decode_hex(" ".join(kept))
        if decoded is not None:
            skip = sum(len(w) + 1 for w in words[:head])
            return skip, " ".join(kept), decoded
    return None


def _base64_parts(text: str) -> Iterable[DecodedPart]:
    for m in _BASE64_RUN.finditer(text):
        lines = m.group().split("\n")
        # A run over several lines whose lines are words is prose that happens to wrap.
        joined = len(lines) == 1 or not any(_WORD.fullmatch(line.rstrip("\r=")) for line in lines)
        decoded = _decode_base64(m.group()) if joined else None
        if decoded is not None:
            yield DecodedPart("base64", m.start(), m.end(), decoded)
            continue
        if "\n" in m.group():
            # The lines together are no valid text (a prose line may have joined them,
            # "an\nAmazon"): try each line on its own.
            offset = m.start()
            for line in m.group().split("\n"):
                line_decoded = _decode_base64(line)
                if line_decoded is not None:
                    yield DecodedPart("base64", offset, offset + len(line.rstrip("\r")), line_decoded)
                offset += len(line) + 1


def decode_encoded_parts(text: str, encodings: Iterable[str]) -> DecodedText:
    """``text`` with each decodable run of the given ``encodings`` replaced by its decoding.

    Hex runs are looked for first, then base64 runs that do not overlap a decoded hex run
    (hex digits are base64 letters too). Offsets in the returned parts refer to ``text``.
    """
    wanted = set(encodings)
    parts: list[DecodedPart] = []
    if "base16" in wanted:
        parts.extend(_hex_parts(text))
    if "base64" in wanted:
        parts.extend(_base64_parts(text))
    # Hex digits are base64 letters too: where a base64 run overlaps a hex run, hex wins
    # (ENCODINGS lists base16 first). Runs of one encoding never overlap each other.
    parts = keep_non_overlapping(parts, lambda p: ENCODINGS.index(p.encoding))
    return DecodedText(splice(text, ((p.start, p.end, p.decoded) for p in parts)), parts)
