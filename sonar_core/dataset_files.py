"""A dataset file's records: the fields a record may carry (:class:`RowFields`, :data:`DATASET_FIELDS`), and
reading them from JSON, JSONL and CSV, each checked for what breaks it.

Each reader yields ``(where, record)`` pairs (``where`` names the file and row for errors) and
raises :class:`~sonar_core.errors.DatasetError` with one line naming the file, line and column of
what is wrong (invalid JSON, bytes that are not UTF-8, an unbalanced CSV quote). The rows are
validated by :mod:`sonar_core.dataset`.
"""

from __future__ import annotations

import codecs
import json
import re
import warnings
import types
from pathlib import Path
from typing import Any, BinaryIO, Iterable, TypedDict, Union, get_args, get_origin, get_type_hints, is_typeddict

from .conversation import SimulatedUser, ToolCall, ToolDeclaration, ToolResult, Turn
from .errors import DatasetError
from .jsontypes import JsonObject, JsonValue

__all__ = ["RowFields", "DATASET_FIELDS", "read_json", "read_jsonl", "read_csv", "check_csv_quotes", "check_utf8"]


class RowFields(TypedDict, total=False):
    """A row's fields by name: what :meth:`~sonar_core.dataset.Row.to_dict` gives, and a row under construction
    (one key per entry of :data:`DATASET_FIELDS`)."""
    key: str
    input: str
    expected_output: str
    context: list[str]
    categories: list[str]
    output_condition: str
    output_constraints: list[str]
    actual_output: str
    actual_duration: float | None
    cost: float | None
    model_key: str
    test_case_key: str
    test_key: str
    corpus: list[str]
    relationships: list[JsonObject]
    original_test_case_key: str
    perturbation: str
    conversation: list[Turn]
    expected_tool_calls: list[ToolCall]
    expected_outcome: str
    tools: list[ToolDeclaration]
    tool_results: list[ToolResult]
    max_turns: int | None
    simulated_user: SimulatedUser
    epoch: int
    trace_id: str
    span_id: str
    attack: JsonObject



def _python_type(hint: object) -> type:
    """The Python type a dataset value of a field typed ``hint`` must have (``X | None``: X's)."""
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(arg for arg in get_args(hint) if arg is not type(None))
    if is_typeddict(hint):
        return dict
    origin = get_origin(hint) or hint
    assert isinstance(origin, type), hint
    return origin


#: Fields a dataset file may carry, with the Python type each must have: RowFields' keys and types.
DATASET_FIELDS: dict[str, type] = {name: _python_type(hint) for name, hint
                                   in get_type_hints(RowFields, localns={"JsonValue": JsonValue}).items()}



def read_json(path: Path, text: str) -> Iterable[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # found by the fuzz suite: '[' * 100000 took the run down with a traceback
        raise DatasetError(f"{path}: JSON nested too deeply") from None
    if isinstance(data, dict):
        # H2O Sonar test suites wrap rows as {"inputs": [...]}.
        for wrapper in ("inputs", "rows", "data"):
            if isinstance(data.get(wrapper), list):
                data = data[wrapper]
                break
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of rows or an object with an 'inputs' list")
    for i, record in enumerate(data, start=1):
        yield f"{path}: row {i}", record


def read_jsonl(path: Path, handle: BinaryIO, digest) -> Iterable[tuple[str, Any]]:
    """Records of a JSON Lines file, read line by line (never the whole text at once).

    Lines end with ``\\n`` (a ``\\r`` before it is whitespace to JSON); blank lines are skipped.
    Every byte read also goes into ``digest``, the dataset's fingerprint.
    """
    for lineno, raw_line in enumerate(handle, start=1):
        digest.update(raw_line)
        if lineno == 1 and raw_line.startswith(codecs.BOM_UTF8):
            raw_line = raw_line[len(codecs.BOM_UTF8):]
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}: not UTF-8 (invalid byte 0x{raw_line[exc.start]:02x} on line {lineno})") from None
        if not line.strip():
            continue
        # Without its line end, so that a message's column counts within the line.
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise DatasetError(f"{path}: line {lineno}: JSON nested too deeply") from None
        yield f"{path}: line {lineno}", record


# RFC 4180 fields: quoted (a '"' inside written '""') or plain (no '"' at all).
_QUOTED_FIELD = re.compile(r'"[^"]*(?:""[^"]*)*"')
_PLAIN_FIELD = re.compile(r'[^,"\r\n]*')


def check_csv_quotes(path: Path, text: str) -> None:
    """Raise DatasetError at the first unbalanced quote, naming its line and column.

    datatable's reader accepts a field with an opening quote that never closes, or a stray
    quote inside a field, and keeps the quote as text (in a key, say); such a file is
    almost always a broken export, so it is refused here, before any row is read.
    """
    if '"' not in text:
        return
    pos, end_of_text = 0, len(text)
    header: list[str] = []
    field, in_header = 0, True

    def error(at: int, what: str) -> DatasetError:
        line = text.count("\n", 0, at) + 1
        column = f"column '{header[field]}'" if not in_header and field < len(header) else f"field {field + 1}"
        return DatasetError(f"{path}: line {line}, {column}: unbalanced quote ({what})")

    while pos < end_of_text:
        if text[pos] == '"':
            match = _QUOTED_FIELD.match(text, pos)
            if match is None:
                raise error(pos, "the quoted field that starts here is never closed")
            end = match.end()
            if end < end_of_text and text[end] not in ",\r\n":
                raise error(end, "text after the closing quote; write a '\"' inside a quoted field as '\"\"'")
            value = text[pos + 1:end - 1].replace('""', '"')
        else:
            end = _PLAIN_FIELD.match(text, pos).end()
            if end < end_of_text and text[end] == '"':
                raise error(end, "a '\"' inside a field that is not enclosed in quotes; enclose the field in quotes "
                                 "and write each '\"' in it as '\"\"'")
            value = text[pos:end]
        if in_header:
            header.append(value)
        pos = end
        if pos < end_of_text:
            separator = text[pos]
            pos += 1
            if separator == ",":
                field += 1
                continue
            if separator == "\r" and pos < end_of_text and text[pos] == "\n":
                pos += 1
            field, in_header = 0, False


def read_csv(path: Path, text: str) -> Iterable[tuple[str, Any]]:
    import datatable as dt  # imported here: only CSV needs it

    check_csv_quotes(path, text)
    try:
        # Every column as text: type inference would turn a key like "007" into 7;
        # numbers are converted field by field, with the row named on error.
        with warnings.catch_warnings(record=True) as said:  # datatable's warnings would be lines of their own
            warnings.simplefilter("always")
            frame = dt.fread(str(path), encoding="utf-8", na_strings=[], fill=False, columns=dt.str32, sep=",")
    except Exception as exc:  # datatable raises its own IOError/ValueError subclasses
        raise DatasetError(f"{path}: cannot read CSV: {str(exc).splitlines()[0]}") from None
    for warning in said:
        twice = re.search(r"Duplicate column name found, and was assigned a unique name: (.*?) ->", str(warning.message))
        if twice:  # renamed silently, one column's values would be read under another name
            raise DatasetError(f"{path}: header: two columns are named {twice.group(1)}")
    names = list(frame.names)
    columns = frame.to_dict()
    for i in range(frame.nrows):
        # Row numbers count the header as line 1, as a spreadsheet would show them.
        yield f"{path}: row {i + 2}", {name: columns[name][i] for name in names}


def check_utf8(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}: not UTF-8 (invalid byte 0x{raw[exc.start]:02x} on line {line})") from None
