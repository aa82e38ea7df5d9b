"""Calibration sets: labelled items on which a judge evaluator's verdicts are measured.

A set is a UTF-8 JSON Lines file. Line 1 is a header::

    {"calibration_set": "<evaluator id>", "version": 1, "labels": ["present", "absent"],
     "source": "...", "licence": "Apache-2.0", "notes": "..."}

every further line one item, whose row fields are the dataset's (:class:`sonar_core.dataset.Row`)::

    {"id": "contact_information-001", "label": "present", "input": "...", "actual_output": "...",
     "context": ["..."], "expected_output": "...", "note": "why this item"}

``context`` and ``expected_output`` are optional (an evaluator that needs them says so when the
set is used); ``label`` is one of the header's labels. A built-in or plugin judge evaluator ships
its set next to its module as ``calibration/<evaluator id>.jsonl``; BYOP takes one from the user.
Any fault is one line: ``<file>:<line>: <field>: <what is wrong>``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..conversation import Turn, first_user_content, last_assistant_content, parse_conversation
from ..errors import ConfigError, DatasetError
from ..jsontypes import JsonObject

__all__ = ["CalibrationItem", "CalibrationSet", "CalibrationSetError", "balanced_subset", "load_calibration_set"]

_HEADER_FIELDS = {"calibration_set", "version", "labels", "source", "licence", "notes"}
_ITEM_FIELDS = {"id", "label", "input", "actual_output", "context", "expected_output", "note", "conversation",
                "expected_outcome"}


class CalibrationSetError(ConfigError):
    """A calibration set that cannot be used; the message names the file, the line and the field."""


@dataclass(frozen=True)
class CalibrationItem:
    """One labelled item; ``line`` is its line number in the file (for messages)."""

    id: str
    label: str
    input: str
    actual_output: str
    context: tuple[str, ...] = ()
    expected_output: str = ""
    note: str = ""
    line: int = 0
    conversation: tuple[Turn, ...] = ()
    expected_outcome: str = ""


@dataclass(frozen=True)
class CalibrationSet:
    """A loaded set: its header, its items and the SHA-256 of the file (part of the result cache's key)."""

    path: Path
    evaluator_id: str
    version: int
    labels: tuple[str, ...]
    source: str
    licence: str
    notes: str
    items: tuple[CalibrationItem, ...]
    sha256: str


def balanced_subset(calibration: CalibrationSet, limit: int | None) -> CalibrationSet:
    """At most ``limit`` items, as evenly spread over the labels as the set allows, each label's
    first items in file order (so the subset is the same on every machine); the set itself when
    ``limit`` is None or not smaller than the set."""
    if limit is None or limit >= len(calibration.items):
        return calibration
    by_label = {label: [item for item in calibration.items if item.label == label] for label in calibration.labels}
    chosen: list[CalibrationItem] = []
    rank = 0
    while len(chosen) < limit and any(rank < len(items) for items in by_label.values()):
        for label in calibration.labels:
            if rank < len(by_label[label]) and len(chosen) < limit:
                chosen.append(by_label[label][rank])
        rank += 1
    order = {id(item): n for n, item in enumerate(calibration.items)}
    return replace(calibration, items=tuple(sorted(chosen, key=lambda item: order[id(item)])))


def _fail(path: Path, line: int, field: str, problem: str) -> None:
    raise CalibrationSetError(f"calibration set {path}:{line}: {field}: {problem}")


def _text(path: Path, line: int, data: JsonObject, field: str, required: bool) -> str:
    if field not in data:
        if required:
            _fail(path, line, field, "missing")
        return ""
    value = data[field]
    if not isinstance(value, str):
        _fail(path, line, field, f"expected text, got {type(value).__name__}")
    return value


def _conversation(path: Path, line: int, data: JsonObject) -> list[Turn]:
    if "conversation" not in data:
        return []
    try:
        return parse_conversation(data["conversation"], "item")
    except DatasetError as exc:
        _fail(path, line, "conversation", str(exc).split("field 'conversation'", 1)[-1].lstrip(", :") or "malformed")
    return []


def _object(path: Path, number: int, text: str) -> JsonObject:
    try:
        data = json.loads(text)
    except ValueError as exc:
        _fail(path, number, "(line)", f"not JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(data, dict):
        _fail(path, number, "(line)", f"expected a JSON object, got {type(data).__name__}")
    return data


def load_calibration_set(path: str | Path, evaluator_id: str | None = None,
                         labels: tuple[str, ...] | None = None) -> CalibrationSet:
    """Read and check the set at ``path``.

    Args:
        evaluator_id: when given, the header's ``calibration_set`` must name it.
        labels: when given, the header's labels must be exactly these (in any order).

    Raises:
        CalibrationSetError: a missing file, bad JSON, a missing or mistyped field, an unknown
            field, an unknown or duplicate label or id, or a set without items.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CalibrationSetError(f"calibration set {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CalibrationSetError(f"calibration set {path}: not UTF-8 text") from None
    # Lines end at "\n" only: str.splitlines would also split a JSON string holding U+2028 or U+0085.
    lines = [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if not lines:
        _fail(path, 1, "calibration_set", "the file is empty (line 1 must be the header)")
    header_line, header_text = lines[0]
    header = _object(path, header_line, header_text)
    unknown = sorted(set(header) - _HEADER_FIELDS)
    if unknown:
        _fail(path, header_line, unknown[0], "unknown header field (expected " + ", ".join(sorted(_HEADER_FIELDS)) + ")")
    set_id = _text(path, header_line, header, "calibration_set", True)
    if evaluator_id is not None and set_id != evaluator_id:
        _fail(path, header_line, "calibration_set", f"names {set_id!r}, expected {evaluator_id!r}")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        _fail(path, header_line, "version", "expected a whole number")
    declared = header.get("labels")
    if not isinstance(declared, list) or len(declared) < 2 or not all(isinstance(x, str) and x for x in declared):
        _fail(path, header_line, "labels", "expected a list of at least two label names")
    if len(set(declared)) != len(declared):
        _fail(path, header_line, "labels", "a label is listed twice")
    if labels is not None and set(declared) != set(labels):
        _fail(path, header_line, "labels", f"{declared} differ from the evaluator's {list(labels)}")
    items: list[CalibrationItem] = []
    seen: set[str] = set()
    for number, line in lines[1:]:
        data = _object(path, number, line)
        unknown = sorted(set(data) - _ITEM_FIELDS)
        if unknown:
            _fail(path, number, unknown[0], "unknown field (expected " + ", ".join(sorted(_ITEM_FIELDS)) + ")")
        item_id = _text(path, number, data, "id", True)
        if not item_id:
            _fail(path, number, "id", "empty")
        if item_id in seen:
            _fail(path, number, "id", f"{item_id!r} is used twice")
        seen.add(item_id)
        label = _text(path, number, data, "label", True)
        if label not in declared:
            _fail(path, number, "label", f"{label!r} is not one of the header's labels {declared}")
        context = data.get("context", [])
        if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
            _fail(path, number, "context", "expected a list of texts")
        # A conversation item (the conversation judges') needs no input or answer: they default to
        # its first user turn and last assistant turn, as on a dataset row.
        conversation = _conversation(path, number, data)
        items.append(CalibrationItem(
            id=item_id, label=label,
            input=_text(path, number, data, "input", not conversation) or first_user_content(conversation) or "",
            actual_output=_text(path, number, data, "actual_output", not conversation)
            or last_assistant_content(conversation) or "", context=tuple(context),
            expected_output=_text(path, number, data, "expected_output", False),
            note=_text(path, number, data, "note", False), line=number, conversation=tuple(conversation),
            expected_outcome=_text(path, number, data, "expected_outcome", False)))
    if not items:
        _fail(path, header_line + 1, "(line)", "the set has no items")
    return CalibrationSet(
        path=path, evaluator_id=set_id, version=version, labels=tuple(declared),
        source=str(header.get("source") or ""), licence=str(header.get("licence") or ""),
        notes=str(header.get("notes") or ""), items=tuple(items), sha256=hashlib.sha256(raw).hexdigest())
