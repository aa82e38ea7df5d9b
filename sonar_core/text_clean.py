"""Text cleaning: what Sonar does with text it cannot write (docs/reliability.md).

A Python string can hold lone surrogates (``"Par\\ud800is"``): JSON allows them as escapes, and a
model API that cuts an emoji in half produces them. No UTF-8 file can hold one, so a run that kept
one failed when it wrote its first artifact. Every text Sonar reads from a dataset, a host's
answer or a judge's answer is cleaned once, when it is read: each lone surrogate becomes U+FFFD
(the replacement character), and the caller counts the values it cleaned per field, for the
journal (``cleaned text``) and run.json. Every other character, control characters included,
is kept: UTF-8 and JSON can hold them, and HTML output escapes them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "clean_text", "clean_value", "count_cleaned"]

#: What an unencodable character becomes.
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> tuple[str, bool]:
    """``text`` with every lone surrogate replaced by U+FFFD, and whether anything was replaced."""
    if text.isascii():  # the common case, and the fastest test
        return text, False
    cleaned, replaced = _SURROGATE.subn(REPLACEMENT, text)
    return cleaned, replaced > 0


def clean_value(value: Any) -> tuple[Any, bool]:
    """Strings, list items, dict keys and values cleaned (recursively); whether anything changed."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        changed = False
        items = []
        for item in value:
            item, did = clean_value(item)
            items.append(item)
            changed |= did
        return (items, True) if changed else (value, False)
    if isinstance(value, dict):
        changed = False
        mapping = {}
        for key, item in value.items():
            key, did_key = clean_value(key)
            item, did = clean_value(item)
            mapping[key] = item
            changed |= did or did_key
        return (mapping, True) if changed else (value, False)
    return value, False


def count_cleaned(counts: dict[str, int], field: str, changed: bool) -> None:
    """Add one to ``counts[field]`` when ``changed``."""
    if changed:
        counts[field] = counts.get(field, 0) + 1
