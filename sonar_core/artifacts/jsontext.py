"""Indented JSON text, character for character what the json module writes, several times faster.

``json.dumps(data, indent=2, ...)`` cannot use the json module's C encoder (it only does compact
output) and falls back to a generator per nesting level, which made writing a run's problems
(each lists every failing row) a large share of a fast evaluator's run. :func:`dumps_indented`
walks the data with one plain recursive function instead and lets the C string encoder do the
strings.

A run writes the same problem and insight objects into several files (the evaluator's
problems file, its summary, and ``run.json`` after every evaluator). A :class:`Fragments`
cache encodes such an object once: JSON text nested ``d`` levels deep is the top-level text
with ``2 * d`` spaces after each line break (strings never hold a raw line break), so the
cached text is re-indented rather than encoded again.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps_indented", "write_indented", "Fragments", "compact_encoder"]

_string = json.encoder.encode_basestring  # the C function when the _json accelerator is present
_float_repr = float.__repr__
_int_repr = int.__repr__
_INFINITY = float("inf")


class Fragments:
    """Objects whose JSON text is kept once encoded; they must not change after :meth:`keep`."""

    def __init__(self) -> None:
        # id -> (the object, so its id cannot be reused while cached; its top-level text or None)
        self._texts: dict[int, tuple[Any, str | None]] = {}

    def keep(self, *objects: Any) -> None:
        for obj in objects:
            self._texts.setdefault(id(obj), (obj, None))


def _float_text(value: float) -> str:
    if value != value or value == _INFINITY or value == -_INFINITY:
        raise ValueError("Out of range float values are not JSON compliant: " + repr(value))
    return _float_repr(value)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return _int_repr(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def dumps_indented(data: Any, fragments: Fragments | None = None) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str)``, exactly."""
    parts: list[str] = []
    _encode_into(data, parts, fragments, None)
    return "".join(parts)


def write_indented(handle, data: Any, fragments: Fragments | None = None) -> None:
    """Write :func:`dumps_indented`'s text of ``data`` to the text file ``handle``."""
    parts: list[str] = []
    _encode_into(data, parts, fragments, handle)
    handle.write("".join(parts))


# With an output file, the encoded pieces go out when this many are pending, and a cached
# fragment is written in blocks of this many characters: a summary that repeats a large list
# of problems is never one string in memory.
_PENDING_PARTS = 65536
_WRITE_BLOCK = 1 << 20


def _encode_into(data: Any, parts: list[str], fragments: Fragments | None, handle) -> None:
    append = parts.append
    cached = fragments._texts if fragments is not None else None

    def flush() -> None:
        handle.write("".join(parts))
        parts.clear()

    def encode(o: Any, newline: str) -> None:
        # ``newline`` is a line break followed by the current indentation.
        if isinstance(o, str):
            append(_string(o))
        elif o is None:
            append("null")
        elif o is True:
            append("true")
        elif o is False:
            append("false")
        elif isinstance(o, int):
            append(_int_repr(o))
        elif isinstance(o, float):
            append(_float_text(o))
        elif isinstance(o, (list, tuple)):
            if not o:
                append("[]")
                return
            inner = newline + "  "
            if all(type(v) is str for v in o):
                append("[" + inner + ("," + inner).join(map(_string, o)) + newline + "]")
                return
            append("[")
            separator = inner
            for value in o:
                append(separator)
                separator = "," + inner
                encode(value, inner)
                if handle is not None and len(parts) > _PENDING_PARTS:
                    flush()
            append(newline + "]")
        elif isinstance(o, dict):
            if cached is not None and (hit := cached.get(id(o))) is not None:
                text = hit[1]
                if text is None:
                    text = dumps_indented(o)
                    cached[id(o)] = (o, text)
                if handle is None or len(text) <= _WRITE_BLOCK:
                    append(text if newline == "\n" else text.replace("\n", newline))
                    return
                flush()
                for start in range(0, len(text), _WRITE_BLOCK):
                    block = text[start:start + _WRITE_BLOCK]
                    handle.write(block if newline == "\n" else block.replace("\n", newline))
                return
            if not o:
                append("{}")
                return
            inner = newline + "  "
            append("{")
            separator = inner
            for key, value in o.items():
                append(separator + _string(_key_text(key)) + ": ")
                separator = "," + inner
                encode(value, inner)
            append(newline + "}")
        else:
            encode(str(o), newline)  # json's default=str

    encode(data, "\n")


def compact_encoder(*, item_separator: str, key_separator: str, sort_keys: bool, allow_nan: bool):
    """A function ``obj -> str`` equal to ``json.dumps(obj, ensure_ascii=False, separators=..., ...)``.

    It reuses one C encoder instead of building a JSONEncoder and its C encoder per call,
    which cost more than encoding a small object (one per row of the eval results).
    There is no circular-reference check: the data is the run's own.
    """
    fallback = json.JSONEncoder(ensure_ascii=False, separators=(item_separator, key_separator),
                                sort_keys=sort_keys, allow_nan=allow_nan)
    make = json.encoder.c_make_encoder
    if make is None:  # no C accelerator (e.g. PyPy)
        return fallback.encode
    encoder = make(None, fallback.default, _string, None, key_separator, item_separator, sort_keys, False, allow_nan)

    def encode(obj: Any) -> str:
        if isinstance(obj, str):
            return _string(obj)
        return "".join(encoder(obj, 0))

    return encode
