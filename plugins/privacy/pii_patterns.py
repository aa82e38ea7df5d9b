"""A regular-expression suite that finds formatted personally identifiable information (PII).

Kinds found by :func:`find_pii`:

``credit_card``
    13 to 19 digits, contiguous or in groups separated by one kind of separator (space or
    dash), starting with 2-6 like every major card network's numbers (13 digits: 4, Visa),
    and passing the Luhn checksum. A number that fails Luhn is not reported, nor one that is
    part of a decimal number or a path (``3.1780538303479458``, ``svc/5191625155316533644``).
``ssn``
    US social security numbers written ``AAA-GG-SSSS`` or ``AAA GG SSSS``. Numbers the SSA
    never issues are rejected: area 000, 666 or 900-999, group 00, serial 0000. Nine bare
    digits are not reported, since they are far more often an ordinary number than an SSN.
``email``
    ``local@domain.tld`` with an ASCII local part of at most 64 characters.
``phone``
    US numbers with separators (``(555) 234-5678``, ``555-234-5678``, ``555.234.5678``,
    optionally prefixed by ``1`` or ``+1``) whose area code and exchange start with 2-9, and
    international numbers starting with ``+`` and a non-zero country code that hold 8 to 15
    digits (the E.164 limit).
``iban``
    International bank account numbers, contiguous or in groups of four, whose country code
    is in the IBAN registry with the registered length and which pass the ISO 7064 mod-97
    check.

Every pattern anchors its first character so that it cannot start inside a longer run of
the characters it consumes; this keeps a search linear in the length of the text (a 1 MB
answer takes well under a second).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .matches import TextMatch, keep_non_overlapping, mask_middle

__all__ = ["PiiMatch", "PII_KINDS", "find_pii", "mask", "luhn_ok", "ssn_ok", "iban_ok"]


@dataclass(frozen=True)
class PiiMatch(TextMatch):
    """One PII leak found in a text (see :class:`.matches.TextMatch` for the fields)."""


#: Kinds in the order they win when two matches overlap (most specific first).
PII_KINDS: tuple[str, ...] = ("iban", "credit_card", "ssn", "email", "phone")
_PRIORITY = {kind: i for i, kind in enumerate(PII_KINDS)}

# re.ASCII: \d and \w must not match other scripts' digits and letters, which no card,
# SSN or phone number is written with.
_FLAGS = re.ASCII

# Digits after "3." or before ".5" are a decimal number's, not an identifier's.
_NOT_DECIMAL = r"(?<!\d[.,])"
_NO_DECIMALS_AFTER = r"(?![.,]\d)"
_CREDIT_CARD = re.compile(
    rf"(?<![\w/-])(?<!\d[ -]){_NOT_DECIMAL}"  # not inside a word, path, number or digit groups
    r"(?:\d{13,19}|\d{4,6}(?:[ -]\d{2,6}){1,4})"
    rf"(?!\w)(?![ -]\d){_NO_DECIMALS_AFTER}",
    _FLAGS,
)
_SSN = re.compile(
    rf"(?<![\w-])(?<!\d ){_NOT_DECIMAL}(\d{{3}})([- ])(\d{{2}})\2(\d{{4}})(?!\w)(?![- ]\d){_NO_DECIMALS_AFTER}",
    _FLAGS,
)
# Addresses may hold non-ASCII letters (RFC 6531), so this one pattern is Unicode-aware.
_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@"
    r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}"
    r"(?![\w-])"
)
_US_PHONE = re.compile(
    rf"(?<![\w+])(?<!\d[ .-]){_NOT_DECIMAL}"
    r"(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}"
    rf"(?!\w)(?![ .-]\d){_NO_DECIMALS_AFTER}",
    _FLAGS,
)
_INTL_PHONE = re.compile(r"(?<![\w+])\+[1-9][\d .()-]{6,22}\d(?!\w)", _FLAGS)
# Two separators in a row are prose, not a number: "+1 - 2"; ") " and " (" are fine.
_PROSE_SEPARATORS = re.compile(r"[ .-]{2}|\(\)|[.-][()]|[()][.-]")
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}"
    r"(?:(?: [A-Z0-9]{4})+(?: [A-Z0-9]{1,3})?|[A-Z0-9]{11,30})"
    r"(?![A-Za-z0-9])",
    _FLAGS,
)

# Registered IBAN lengths (characters, country code included) by country, ISO 13616.
_IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27,
    "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28,
    "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


# -- checksums and validity rules --------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """Whether a string of ASCII digits passes the Luhn (mod 10) checksum."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def ssn_ok(area: str, group: str, serial: str) -> bool:
    """Whether an SSN's three parts could have been issued (no 000/666/9xx, 00, 0000)."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def iban_ok(compact: str) -> bool:
    """Whether ``compact`` (no spaces, upper case) is a registered-length IBAN passing mod 97."""
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    # Letters count as two-digit numbers: A = 10 ... Z = 35.
    as_number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(as_number) % 97 == 1


def _card_ok(text: str) -> bool:
    separators = {ch for ch in text if not ch.isdigit()}
    digits = "".join(ch for ch in text if ch.isdigit())
    if len(separators) > 1 or not 13 <= len(digits) <= 19:
        return False
    # Payment cards of every major network start with 2-6 (the banking and financial
    # industries); only Visa issued 13-digit numbers. This keeps millisecond timestamps
    # (1433189873898) and other long IDs out even when they pass Luhn by chance.
    if digits[0] not in "23456" or (len(digits) == 13 and digits[0] != "4"):
        return False
    return luhn_ok(digits)


def _us_phone_ok(text: str) -> bool:
    digits = "".join(ch for ch in text if ch.isdigit())
    if len(digits) == 11:
        if digits[0] != "1":
            return False
        digits = digits[1:]
    return len(digits) == 10 and digits[0] in "23456789" and digits[3] in "23456789"


def _intl_phone_ok(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    if not 8 <= digits <= 15 or text.count("(") != text.count(")"):
        return False
    return _PROSE_SEPARATORS.search(text) is None


# -- masking -----------------------------------------------------------------------------


def mask(kind: str, value: str) -> str:
    """A safe-to-show form of one PII ``value`` of the given ``kind``.

    Examples: ``4111********1111`` (card: first and last four digits), ``***-**-6789``
    (SSN: serial only), ``j***@example.com`` (email: first character and the domain),
    ``(***) ***-4567`` and ``+** * ** ** 67 89`` (phone: last four digits), ``DE89**************3000`` (IBAN: country,
    check digits and last four).
    """
    if kind == "credit_card":
        return mask_middle("".join(ch for ch in value if ch.isdigit()), 4, 4)
    if kind == "ssn":
        return "***-**-" + "".join(ch for ch in value if ch.isdigit())[-4:]
    if kind == "email":
        local, _, domain = value.rpartition("@")
        return f"{local[:1]}***@{domain}"
    if kind == "phone":
        return _mask_all_but_last_digits(value, 4)
    if kind == "iban":
        return mask_middle(value.replace(" ", ""), 4, 4)
    return mask_middle(value, 2, 2)


def _mask_all_but_last_digits(value: str, keep: int) -> str:
    """Digits hidden except the last ``keep`` of them; separators and ``+`` stay."""
    out = []
    for ch in reversed(value):
        if ch.isdigit():
            out.append(ch if keep > 0 else "*")
            keep -= 1
        else:
            out.append(ch)
    return "".join(reversed(out))


# -- the search --------------------------------------------------------------------------


def _iban_candidates(text: str):
    for m in _IBAN.finditer(text):
        raw = m.group()
        groups = raw.split(" ")
        # A spaced IBAN followed by an upper-case word ("... 3000 CASH") swallows the word:
        # try the longest prefix of whole groups that validates.
        for n in range(len(groups), 0, -1):
            candidate = " ".join(groups[:n])
            if iban_ok(candidate.replace(" ", "")):
                yield m.start(), m.start() + len(candidate), candidate
                break


def _candidates(text: str):
    """Every validated match, before overlaps between kinds are resolved."""
    for m in _CREDIT_CARD.finditer(text):
        if _card_ok(m.group()):
            yield PiiMatch("credit_card", m.start(), m.end(), mask("credit_card", m.group()))
    for m in _SSN.finditer(text):
        if ssn_ok(m.group(1), m.group(3), m.group(4)):
            yield PiiMatch("ssn", m.start(), m.end(), mask("ssn", m.group()))
    if "@" in text:  # a cheap pre-check: most texts hold no address at all
        for m in _EMAIL.finditer(text):
            yield PiiMatch("email", m.start(), m.end(), mask("email", m.group()))
    for m in _US_PHONE.finditer(text):
        if _us_phone_ok(m.group()):
            yield PiiMatch("phone", m.start(), m.end(), mask("phone", m.group()))
    if "+" in text:
        for m in _INTL_PHONE.finditer(text):
            if _intl_phone_ok(m.group()):
                yield PiiMatch("phone", m.start(), m.end(), mask("phone", m.group()))
    for start, end, value in _iban_candidates(text):
        yield PiiMatch("iban", start, end, mask("iban", value))


def find_pii(text: str) -> list[PiiMatch]:
    """All PII in ``text``, sorted by position; overlapping matches are reported once.

    When two matches overlap, the kind earlier in :data:`PII_KINDS` wins (an IBAN's digits
    are not also reported as a phone number). Offsets are character offsets into ``text``.
    """
    if not text:
        return []
    return keep_non_overlapping(_candidates(text), lambda m: _PRIORITY[m.kind])
