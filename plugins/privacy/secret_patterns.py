"""A regular-expression suite that finds secrets: keys, tokens, certificates and passwords.

Kinds found by :func:`find_secrets` (most specific first; when two overlap, the earlier wins):

``pem_private_key`` / ``pem_certificate``
    PEM blocks (``-----BEGIN RSA PRIVATE KEY-----``, ``OPENSSH PRIVATE KEY``, ``PGP PRIVATE
    KEY BLOCK``, ``CERTIFICATE``, ``CERTIFICATE REQUEST``...) with at least 32 characters of
    base64 body. A block cut off before its ``-----END ...-----`` line still counts (a
    truncated private key is still leaked); a header with no body ("a PEM file begins with
    -----BEGIN CERTIFICATE-----") does not.
``openai_api_key``
    ``sk-proj-``, ``sk-svcacct-`` and ``sk-admin-`` keys (20+ characters of ``[A-Za-z0-9_-]``)
    and legacy keys: ``sk-`` followed by 48 letters and digits.
``h2o_api_key``
    H2O.ai (h2oGPTe) keys: ``sk-`` followed by exactly 43 letters and digits, the shape of the
    example key in H2O Sonar's own public source (``sk-Uaq1B5GT...``, 32 random bytes in
    unpadded base64). Any other ``sk-`` token of 32+ characters is ``secret_key``.
``aws_access_key_id``
    ``AKIA`` (long-term) or ``ASIA`` (temporary) followed by 16 upper-case letters or digits.
``aws_secret_access_key``
    40 base64 characters assigned to a name containing ``aws_secret_access_key``.
``github_token``
    ``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` followed by 36+ letters and digits, and
    fine-grained ``github_pat_`` tokens.
``slack_token``
    ``xoxa-``, ``xoxb-``, ``xoxp-``, ``xoxr-``, ``xoxs-`` tokens.
``google_api_key``
    ``AIza`` followed by 35 characters of ``[A-Za-z0-9_-]``.
``jwt``
    Three base64url segments whose first decodes to a JSON object with an ``alg`` field.
``windows_product_key``
    Five dash-separated groups of five upper-case letters or digits, with at least one letter
    and one digit (``XXXXX-XXXXX-...`` placeholders and upper-case words are not keys).
``password``
    ``password`` or ``passwd`` followed by ``:`` or ``=`` and a value of 8+ non-space
    characters that mixes letters with digits or symbols (``password: Summer2024!``; not
    ``password: must be long``, nor placeholders and code such as ``[Password]``,
    ``${DB_PASSWORD}``, ``get_password()`` or ``password=user_password``).

Patterns cannot start inside a longer token, which keeps each search linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from .matches import TextMatch, keep_non_overlapping, mask_middle

__all__ = ["SecretMatch", "SECRET_KINDS", "find_secrets", "mask_secret"]


@dataclass(frozen=True)
class SecretMatch(TextMatch):
    """One secret found in a text (see :class:`.matches.TextMatch` for the fields)."""


#: Kinds in the order they win when two matches overlap (most specific first).
SECRET_KINDS: tuple[str, ...] = (
    "pem_private_key",
    "pem_certificate",
    "openai_api_key",
    "h2o_api_key",
    "secret_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "slack_token",
    "google_api_key",
    "jwt",
    "windows_product_key",
    "password",
)
_PRIORITY = {kind: i for i, kind in enumerate(SECRET_KINDS)}

_A = re.ASCII
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*?(?:PRIVATE KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?))-----", _A)
# One line of a PEM body: base64 (group 1), ended by a line break, the end of the text, or
# an END marker on the same line (a block pasted as one line; group 2 is then empty).
_PEM_BODY_LINE = re.compile(r"[ \t]*([A-Za-z0-9+/=]*)[ \t]*(\r?\n|$|(?=-----END ))", _A)
# Encrypted legacy keys carry "Proc-Type:" / "DEK-Info:" header lines before the body.
_PEM_HEADER_LINE = re.compile(r"[ \t]*[A-Za-z-]+: [^\n]*(?:\n|$)", _A)

# (kind, pattern): a match is reported when the optional validator for the kind accepts it.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("openai_api_key", re.compile(r"(?<![\w-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}", _A)),
    ("openai_api_key", re.compile(r"(?<![\w-])sk-[A-Za-z0-9]{48}(?![\w-])", _A)),
    ("h2o_api_key", re.compile(r"(?<![\w-])sk-[A-Za-z0-9]{43}(?![\w-])", _A)),
    ("secret_key", re.compile(r"(?<![\w-])sk-[A-Za-z0-9_-]{32,}", _A)),
    ("aws_access_key_id", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])", _A)),
    (
        "aws_secret_access_key",
        re.compile(
            r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            _A,
        ),
    ),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])", _A)),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}(?![A-Za-z0-9_])", _A)),
    ("slack_token", re.compile(r"(?<![\w-])xox[abprs]-[A-Za-z0-9-]{10,250}(?![\w-])", _A)),
    ("google_api_key", re.compile(r"(?<![\w-])AIza[A-Za-z0-9_-]{35}(?![\w-])", _A)),
    # A JSON header starts with "{" followed by '"' or a space ("ey...") or a newline ("ew...").
    ("jwt", re.compile(r"(?<![\w.-])e[wy][A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?![\w.-])", _A)),
    (
        "windows_product_key",
        re.compile(r"(?<![\w-])[A-Z0-9]{5}(?:-[A-Z0-9]{5}){4}(?![\w-])", _A),
    ),
    ("password", re.compile(r"(?<![A-Za-z])(?i:password|passwd)\s*[:=]\s*[\"']?([^\s\"']{8,128})", _A)),
)


# -- validators --------------------------------------------------------------------------

# A bare identifier, perhaps followed by "," or ";": code, not a password value.
_VARIABLE = re.compile(r"[A-Za-z_.]+[,;]?")


def _jwt_ok(token: str) -> bool:
    header = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
        parsed = json.loads(decoded.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return isinstance(parsed, dict) and "alg" in parsed


def _windows_key_ok(key: str) -> bool:
    return any(ch.isdigit() for ch in key) and any(ch.isalpha() for ch in key)


def _password_ok(value: str) -> bool:
    # Placeholders and code are not passwords: "[Password]", "<secret>", "${PASS}",
    # "%(pw)s", "os.getenv('PW')", "Optional[str]", "options[".
    if value[0] in "<$%" or any(ch in value for ch in "([{"):
        return False
    # "password = master_password," is code passing a variable, not a password.
    if _VARIABLE.fullmatch(value):
        return False
    has_letter = any(ch.isalpha() for ch in value)
    has_other = any(not ch.isalpha() for ch in value)
    # "********" and "xxxxxxxx" are redactions, not passwords.
    return has_letter and has_other and len(set(value)) > 2


_VALIDATORS = {"jwt": _jwt_ok, "windows_product_key": _windows_key_ok, "password": _password_ok}


# -- masking -----------------------------------------------------------------------------

# A password or AWS secret assignment: the name, ":" or "=" and any quote (group 1); the value.
_ASSIGNMENT = re.compile(r"(.*?[:=]\s*[\"']?)(.*)", re.DOTALL)

_KNOWN_PREFIXES = (
    "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_",
    "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "AIza",
)  # fmt: skip


def mask_secret(kind: str, value: str) -> str:
    """A safe-to-show form of one secret: its well-known prefix and last four characters.

    Examples: ``AKIA************MPLE``, ``sk-proj-****…wxyz``, ``ghp_****…1234``,
    ``*****-*****-*****-*****-*V66T``... a PEM block becomes its BEGIN line and the number
    of body characters hidden; a password assignment keeps its name and hides the whole value.
    """
    if kind.startswith("pem_"):
        begin = _PEM_BEGIN.match(value)
        label = begin.group(1) if begin else "PEM"
        body = (value[begin.end() :] if begin else value).split("-----END", 1)[0]
        hidden = sum(ch.isalnum() or ch in "+/=" for ch in body)
        return f"-----BEGIN {label}----- [{hidden} characters hidden]"
    if kind in ("password", "aws_secret_access_key"):
        assignment = _ASSIGNMENT.match(value)
        if assignment:
            name, secret = assignment.groups()
            # A password shows nothing of itself; an AWS secret its last four characters.
            keep_end = 0 if kind == "password" else 4
            return name + "*" * (len(secret) - keep_end) + secret[len(secret) - keep_end :]
    prefix = next((p for p in _KNOWN_PREFIXES if value.startswith(p)), "")
    if kind == "jwt":
        prefix = value[:2]  # "ey" or "ew": says only that a JSON header follows
    rest = value[len(prefix) :]
    if len(rest) > 24 and kind != "windows_product_key":
        # Long tokens (150-character project keys, JWTs): the length is no help to a reader.
        return f"{prefix}****…{rest[-4:]}"
    return prefix + mask_middle(rest, 0, 4)


# -- the search --------------------------------------------------------------------------


def _scan_pem_body(text: str, start: int, stop: int) -> tuple[int, int, bool]:
    """Read whole lines of a PEM body from ``start`` up to ``stop``.

    Returns the offset where the last base64 line ends, the number of base64 characters
    read, and whether every line up to ``stop`` was base64, blank or a header line. Each
    step is an anchored match that stops at the first character out of place, so a long
    line of prose costs no more than its first word.
    """
    pos, end, chars = start, start, 0
    while pos < stop:
        line = _PEM_BODY_LINE.match(text, pos, stop)
        if line is not None and line.end() > pos:
            if line.group(1):
                chars += len(line.group(1))
                end = line.start(1) + len(line.group(1))
            pos = line.end()
            if line.group(2) == "":  # stopped before an END marker on the same line
                break
            continue
        header = _PEM_HEADER_LINE.match(text, pos, stop)
        if header is None or header.end() == pos:
            return end, chars, False
        pos = header.end()
    return end, chars, True


def _pem_candidates(text: str):
    # label -> offset of the next END line (-1: none further on). Cached so that many BEGIN
    # lines without an END do not each rescan the rest of the text.
    next_end: dict[str, int] = {}
    for begin in _PEM_BEGIN.finditer(text):
        label = begin.group(1)
        end_marker = f"-----END {label}-----"
        end_at = next_end.get(label, begin.end())
        if 0 <= end_at < begin.end() or label not in next_end:
            end_at = text.find(end_marker, begin.end())
            next_end[label] = end_at
        body_end, chars, clean = _scan_pem_body(text, begin.end(), end_at if end_at >= 0 else len(text))
        # With an END line and nothing but base64 before it, the block runs to the END line;
        # otherwise (no END, or prose before it) the leak is the base64 lines that were read.
        stop = end_at + len(end_marker) if end_at >= 0 and clean else body_end
        if chars < 32:
            continue
        kind = "pem_certificate" if "CERTIFICATE" in label else "pem_private_key"
        raw = text[begin.start() : stop]
        yield SecretMatch(kind, begin.start(), stop, mask_secret(kind, raw))


def _candidates(text: str):
    if "-----BEGIN " in text:
        yield from _pem_candidates(text)
    for kind, pattern in _TOKEN_PATTERNS:
        validator = _VALIDATORS.get(kind)
        for m in pattern.finditer(text):
            if validator is None or validator(m.group(m.lastindex or 0)):
                yield SecretMatch(kind, m.start(), m.end(), mask_secret(kind, m.group()))


def find_secrets(text: str) -> list[SecretMatch]:
    """All secrets in ``text``, sorted by position; overlapping matches are reported once.

    When two matches overlap, the kind earlier in :data:`SECRET_KINDS` wins. Offsets are
    character offsets into ``text``.
    """
    if not text:
        return []
    return keep_non_overlapping(_candidates(text), lambda m: _PRIORITY[m.kind])
