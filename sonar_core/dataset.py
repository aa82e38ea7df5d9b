"""The LLM dataset: rows of test case x model, validated as loaded (file formats: :mod:`.dataset_files`).

Field names follow H2O Sonar's llm-eval-results (RESULT_FORMAT.md). A row whose test case is a perturbation
of another carries the original's ``test_case_key`` in ``original_test_case_key`` (and a ``perturbation_of``).
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TypedDict

from .dataset_files import DATASET_FIELDS, RowFields, check_utf8, read_csv, read_json, read_jsonl
from .conversation import (STRUCTURED_FIELDS, SimulatedUser, ToolCall, ToolDeclaration, ToolResult, Turn,
                           conversation_defaults, parse_field)
from .errors import DatasetError
from .inputs import Input
from .jsontypes import JsonObject, JsonValue  # noqa: F401  (JsonValue: JsonObject names it; type hints resolve the name here)
from .text_clean import clean_value, count_cleaned

__all__ = ["Row", "RowFields", "DatasetSummary", "LLMDataset", "load_dataset", "DATASET_FIELDS"]


@dataclass(slots=True)
class Row:
    """One test case answered by one model (slots: a run holds every row; a dict would take 5x the memory)."""

    key: str
    input: str = ""
    expected_output: str = ""
    context: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    output_condition: str = ""
    output_constraints: list[str] = field(default_factory=list)
    actual_output: str = ""
    actual_duration: float | None = None
    cost: float | None = None
    model_key: str = ""
    test_case_key: str = ""
    test_key: str = ""
    corpus: list[str] = field(default_factory=list)
    relationships: list[JsonObject] = field(default_factory=list)
    original_test_case_key: str = ""
    perturbation: str = ""  #: the perturbation that made this case from its original (e.g. "typos")
    #: Turns of a multi-turn case (sonar_core.conversation), the reference tool calls, the goal.
    conversation: list[Turn] = field(default_factory=list)
    expected_tool_calls: list[ToolCall] = field(default_factory=list)
    expected_outcome: str = ""
    #: A test case asked of a host as a conversation: tool declarations, the table of tool results,
    #: the bound on model turns and the simulated user (execution/conversations.py).
    tools: list[ToolDeclaration] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    max_turns: int | None = None
    simulated_user: SimulatedUser = field(default_factory=SimulatedUser)
    epoch: int = 0  #: which ask of the test case this row's answer is (0..epochs-1; docs/epochs.md)
    trace_id: str = ""  #: a row from production traces (docs/traces.md): the trace its verdicts go back to
    span_id: str = ""  #: ... and the span
    attack: JsonObject = field(default_factory=dict)  #: a red-team test case's provenance (docs/redteam.md)

    def has_input(self, needed: Input) -> bool:
        """Whether this row holds a non-empty value for one of the catalogue's inputs."""
        if needed is Input.QUESTION:
            return bool(self.input.strip())
        if needed is Input.EXPECTED_ANSWER:
            return bool(self.expected_output.strip())
        if needed is Input.RETRIEVED_CONTEXT:
            return any(chunk.strip() for chunk in self.context)
        if needed is Input.ACTUAL_ANSWER:
            # An empty answer is still an answer to score (a refusal, a timeout); a dataset
            # with no answers at all is caught by LLMDataset.has_column_for.
            return True
        if needed is Input.CONDITIONS:
            return bool(self.output_condition.strip()) or bool(self.output_constraints)
        if needed is Input.CONVERSATION:
            return bool(self.conversation)
        if needed is Input.EXPECTED_TOOL_CALLS:
            # An empty reference list is a reference ("no tool should be called"); the column must exist.
            return True
        if needed is Input.EXPECTED_OUTCOME:
            return bool(self.expected_outcome.strip())
        raise ValueError(needed)

    def to_dict(self) -> "RowFields":
        return asdict(self)  # type: ignore[return-value]  # asdict gives exactly the fields


class _DatasetShape(TypedDict):
    source: str
    fingerprint: str
    shape: list[int]
    columns: list[str]
    models: list[str]
    unique_test_cases: int


# The optional keys in a total=False subclass: under ``from __future__ import annotations`` Python 3.11
# cannot see NotRequired at run time, and run.json's shape is checked at run time (test_record_shapes).
class DatasetSummary(_DatasetShape, total=False):
    """run.json's ``result.dataset``: the dataset's shape, columns and unique counts."""
    text_cleaned: dict[str, int]  #: values cleaned per field, only where any were
    traces: JsonObject  #: a run on production traces: what was read and skipped (docs/traces.md)



# Columns of the dataset file that carry each catalogue input.
_INPUT_COLUMNS: dict[Input, tuple[str, ...]] = {
    Input.QUESTION: ("input",),
    Input.EXPECTED_ANSWER: ("expected_output",),
    Input.RETRIEVED_CONTEXT: ("context",),
    Input.ACTUAL_ANSWER: ("actual_output",),
    Input.CONDITIONS: ("output_condition", "output_constraints"),
    Input.CONVERSATION: ("conversation",),
    Input.EXPECTED_TOOL_CALLS: ("expected_tool_calls",),
    Input.EXPECTED_OUTCOME: ("expected_outcome",),
}


@dataclass
class LLMDataset:
    """Rows plus where they came from and which columns the file had."""

    rows: list[Row]
    source: str
    columns: list[str]
    fingerprint: str
    #: Field -> how many values were cleaned when the file was read (lone surrogates; docs/reliability.md).
    cleaned: dict[str, int] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    # run.json and index.html ask for these after every evaluator: compute them once per
    # number of rows (the rows are not changed after loading, but may be extended).
    _keys_cache: dict[str, tuple[int, list[str]]] = field(default_factory=dict, repr=False, compare=False)

    def _sorted_unique(self, name: str) -> list[str]:
        hit = self._keys_cache.get(name)
        if hit is None or hit[0] != len(self.rows):
            hit = (len(self.rows), sorted({getattr(r, name) for r in self.rows}))
            self._keys_cache[name] = hit
        return list(hit[1])

    @property
    def models(self) -> list[str]:
        return self._sorted_unique("model_key")

    @property
    def test_case_keys(self) -> list[str]:
        return self._sorted_unique("test_case_key")

    def has_column_for(self, needed: Input) -> bool:
        """Whether the file carried a column for ``needed`` at all (a conversation gives the question and
        the actual answer their defaults: its first user turn, its last assistant turn)."""
        if needed in (Input.QUESTION, Input.ACTUAL_ANSWER) and "conversation" in self.columns:
            return True
        return any(col in self.columns for col in _INPUT_COLUMNS[needed])

    def summary(self) -> DatasetSummary:
        """Shape, columns and unique counts, as run.json's ``result.dataset``."""
        return {
            "source": self.source,
            "fingerprint": self.fingerprint,
            "shape": [len(self.rows), len(self.columns)],
            "columns": self.columns,
            "models": self.models,
            "unique_test_cases": len(self.test_case_keys),
            # Only where text was cleaned: run.json of a clean dataset stays as it was.
            **({"text_cleaned": dict(self.cleaned)} if self.cleaned else {}),
        }


def _coerce_field(name: str, value: Any, where: str) -> Any:
    """Convert one raw value to the type ``name`` needs, or raise DatasetError."""
    expected = DATASET_FIELDS[name]
    if value is None:
        return None
    if expected is float:
        if isinstance(value, bool):
            raise DatasetError(f"{where}, field '{name}': expected a number, got {value!r}")
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                value = float(value)
            except ValueError:
                raise DatasetError(f"{where}, field '{name}': expected a number, got {value!r}") from None
        if isinstance(value, float) and math.isnan(value):
            return None
        if not isinstance(value, (int, float)):
            raise DatasetError(f"{where}, field '{name}': expected a number, got {value!r}")
        if value < 0:
            raise DatasetError(f"{where}, field '{name}': must not be negative, got {value!r}")
        if not value < _LARGEST:  # an infinity, or an integer too large for a float (docs/reliability.md)
            raise DatasetError(f"{where}, field '{name}': expected a finite number, got {value!r}"[:300])
        return float(value)
    if expected is list:
        if isinstance(value, str):
            stripped = value.strip()
            if not stripped:
                return []
            # CSV cells hold lists as JSON arrays.
            if stripped.startswith("["):
                try:
                    value = json.loads(stripped)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{where}, field '{name}': not a valid JSON list ({exc.msg})") from None
                except RecursionError:
                    raise DatasetError(f"{where}, field '{name}': JSON nested too deeply") from None
            else:
                value = [value]
        if not isinstance(value, list):
            raise DatasetError(f"{where}, field '{name}': expected a list, got {type(value).__name__}")
        if name != "relationships" and not all(isinstance(v, str) for v in value):
            raise DatasetError(f"{where}, field '{name}': expected a list of strings")
        if name == "relationships" and not all(isinstance(v, dict) for v in value):
            raise DatasetError(f"{where}, field '{name}': expected a list of objects")
        return value
    if expected is int:  # ``epoch``: a whole number, 0 or more (CSV cells hold it as text)
        number = value.strip() if isinstance(value, str) else value
        if isinstance(number, str) and number.isdigit():
            return int(number)
        if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
            return number
        raise DatasetError(f"{where}, field '{name}': expected a whole number of at least 0, got {value!r}"[:300])
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("key", "test_case_key", "model_key", "test_key"):
        return str(value)
    if not isinstance(value, str):
        raise DatasetError(f"{where}, field '{name}': expected a string, got {type(value).__name__}")
    return value


_LARGEST = 1.7e308  # below the largest float: a larger integer cannot become one

# Text fields whose values recur across the rows of a dataset (one test case, many models):
# rows share one string object per distinct value instead of one each.
_SHARED_FIELDS = ("input", "expected_output", "output_condition", "test_case_key", "model_key", "test_key")


def row_from_record(record: Any, where: str, index: int, shared: dict[str, str] | None = None,
                    cleaned: dict[str, int] | None = None) -> Row:
    """Validate one raw record (dict) into a Row; ``where`` names file and row.

    ``shared``: a dict the loader keeps for one dataset, so that equal texts of
    ``_SHARED_FIELDS`` become one object. Text no UTF-8 file can hold is cleaned
    (:mod:`sonar_core.text_clean`); ``cleaned`` counts the values cleaned per field.
    """
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected an object, got {type(record).__name__}")
    values: RowFields = {}  # keyed by the names of DATASET_FIELDS, which are RowFields' keys
    for name, raw in record.items():
        kind = DATASET_FIELDS.get(name)
        if kind is None:
            continue  # extra columns are kept out of the model but do no harm
        if name in STRUCTURED_FIELDS:
            parsed = parse_field(name, raw, where)
            if parsed is not None:
                values[name] = parsed
            continue
        # The common, valid cases need no conversion; everything else goes through _coerce_field.
        if kind is str:
            if type(raw) is str:
                values[name] = raw
                continue
        elif kind is float:
            if (type(raw) is float or type(raw) is int) and 0 <= raw < _LARGEST:  # NaN and infinities fail it
                values[name] = float(raw)
                continue
        elif type(raw) is list and name != "relationships" and all(type(v) is str for v in raw):
            values[name] = raw
            continue
        coerced = _coerce_field(name, raw, where)
        if coerced is not None:
            values[name] = coerced
    if values.get("conversation"):
        conversation_defaults(values)
    if "input" not in values and "actual_output" not in values and not values.get("simulated_user"):
        raise DatasetError(f"{where}: row has neither 'input' nor 'actual_output'")
    for name, value in values.items():
        if type(value) is str and value.isascii():
            continue
        value, changed = clean_value(value)
        if changed:
            values[name] = value
            count_cleaned(cleaned if cleaned is not None else {}, name, changed)
    if shared is not None:
        for name in _SHARED_FIELDS:
            value = values.get(name)
            if value is not None:
                values[name] = shared.setdefault(value, value)
    values.setdefault("model_key", "model")
    values.setdefault("test_case_key", values.get("key") or f"tc-{index}")
    values.setdefault("key", f"{values['test_case_key']}::{values['model_key']}")
    for rel in values.get("relationships", []):
        if rel.get("type") == "perturbation_of" and not values.get("original_test_case_key"):
            values["original_test_case_key"] = str(rel.get("target", ""))
    if values.get("original_test_case_key") and not any(
        r.get("type") == "perturbation_of" for r in values.get("relationships", [])
    ):
        values.setdefault("relationships", []).append(
            {"type": "perturbation_of", "target": values["original_test_case_key"]}
        )
    for name in _LIST_FIELDS.difference(values):
        values[name] = _NO_ITEMS  # one shared empty list: nine per row were half a row's memory (issue 41)
    return Row(**values)


_LIST_FIELDS = frozenset(name for name, kind in DATASET_FIELDS.items() if kind is list)  #: a row's list fields
_NO_ITEMS: list = []  #: the one empty list rows without them share (never mutated in place: rows are read)


def load_dataset(path: str | Path) -> LLMDataset:
    """Load and validate a dataset file (.json, .jsonl or .csv).

    A JSON Lines file is read and validated line by line, so the first bad line stops the
    load; the other formats are parsed whole, then validated row by row.

    Raises:
        DatasetError: one line naming the file, the row and the field at fault.
    """
    path = Path(path)
    # Millions of small acyclic dicts (conversations): the cyclic collector pauses while rows are read,
    # and gc.freeze leaves them out of its later passes (reference counting still frees them).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read(path)
    finally:
        if collecting:
            gc.enable()
        gc.freeze()


def _read(path: Path) -> LLMDataset:
    suffix = path.suffix.lower()
    digest = hashlib.sha256()
    cleaned: dict[str, int] = {}
    try:
        if not path.is_file():
            raise DatasetError(f"{path}: dataset file not found")
        return _load(path, suffix, digest, cleaned)
    except OSError as exc:  # unreadable (permissions, a folder named like a file, an I/O error)
        raise DatasetError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None


def _load(path: Path, suffix: str, digest, cleaned: dict[str, int]) -> LLMDataset:
    if suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as handle:
            rows, columns = _validate(path, read_jsonl(path, handle, digest), cleaned)
    elif suffix in (".json", ".csv"):
        raw = path.read_bytes()
        digest.update(raw)
        text = check_utf8(path, raw)
        del raw
        records = read_json(path, text) if suffix == ".json" else read_csv(path, text)
        rows, columns = _validate(path, records, cleaned)
    else:
        raise DatasetError(f"{path}: unknown dataset format '{suffix}' (use .json, .jsonl or .csv)")
    return LLMDataset(rows=rows, source=str(path), columns=columns, fingerprint=digest.hexdigest(), cleaned=cleaned)


def _validate(path: Path, records: Iterable[tuple[str, Any]],
              cleaned: dict[str, int] | None = None) -> tuple[list[Row], list[str]]:
    """Rows from ``(where, record)`` pairs, the dataset's columns, and the duplicate-key check."""
    rows: list[Row] = []
    columns: list[str] = []
    last_names: tuple = ()
    seen: dict[str, str] = {}
    shared: dict[str, str] = {}
    for index, (where, record) in enumerate(records, start=1):
        row = row_from_record(record, where, index, shared, cleaned)
        names = tuple(record)
        if names != last_names:  # the rows of a file nearly always share one set of fields
            last_names = names
            columns += [name for name in names if name in DATASET_FIELDS and name not in columns]
        first = seen.setdefault(row.key, where)
        if first is not where:
            raise DatasetError(f"{where}, field 'key': duplicate key {row.key!r} (first at {first.split(': ', 1)[1]})")
        rows.append(row)
    if not rows:
        raise DatasetError(f"{path}: dataset has no rows")
    return rows, columns
