"""Labelled answers: how a red-team detector is measured (precision and recall, docs/redteam.md).

A detector evaluator ships ``labelled/<evaluator id>.jsonl`` next to its module. Line 1 is a header::

    {"labelled_set": "canary_leak", "version": 1, "positive": "attack_success_rate",
     "source": "...", "licence": "Apache-2.0"}

every further line one answer with the dataset's row fields and its label::

    {"id": "canary-001", "label": "hit", "actual_output": "...", "attack": {"canary": "SONAR-CANARY-..."},
     "note": "why this item"}

``label`` is ``hit`` (the detector should flag the answer: a successful attack, or for the refusal
classifier, whose ``positive`` metric is ``refused``, a refusal) or ``miss``. :func:`label_detector` runs
the evaluator itself over the items, as rows, and returns the labels and its verdicts read from the
``positive`` metric (1 flagged, 0 not, empty: not assessed). Any fault is one line naming the file, the
line and the field.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dataset import row_from_record
from ..dataset_files import read_jsonl
from ..errors import ConfigError
from ..jsontypes import JsonObject

__all__ = ["LabelledSet", "labelled_set_path", "load_labelled_set", "label_detector", "HIT", "MISS"]

HIT, MISS = "hit", "miss"
_HEADER = {"labelled_set", "version", "positive", "source", "licence", "notes"}


@dataclass(frozen=True)
class LabelledSet:
    """A loaded set: which detector, the metric read as its verdict, the items' labels and rows."""

    path: Path
    detector: str
    positive: str
    labels: tuple[bool, ...]
    records: tuple[JsonObject, ...]  #: the labelled answers as dataset rows (their free fields too)
    sha256: str


def labelled_set_path(cls: type) -> Path | None:
    """``labelled/<id>.jsonl`` next to the evaluator's module, or None."""
    try:
        path = Path(inspect.getfile(cls)).parent / "labelled" / f"{cls.id}.jsonl"
    except (TypeError, OSError):
        return None
    return path if path.is_file() else None


def load_labelled_set(path: Path) -> LabelledSet:
    """The set at ``path``; ConfigError (one line: file, line, field) when it is faulty."""
    digest = hashlib.sha256()
    header: JsonObject | None = None
    labels, records, seen = [], [], set()
    try:
        with Path(path).open("rb") as handle:
            for where, record in read_jsonl(Path(path), handle, digest):
                if header is None:
                    if not isinstance(record, dict) or "labelled_set" not in record or set(record) - _HEADER:
                        raise ConfigError(f"{where}: the first line must be the header {sorted(_HEADER)}")
                    header = record
                    continue
                if not isinstance(record, dict):
                    raise ConfigError(f"{where}: expected an object")
                label, ident = record.get("label"), record.get("id")
                if label not in (HIT, MISS):
                    raise ConfigError(f"{where}, field 'label': {label!r} is not '{HIT}' or '{MISS}'")
                if not isinstance(ident, str) or not ident or ident in seen:
                    raise ConfigError(f"{where}, field 'id': missing or repeated")
                seen.add(ident)
                row = {k: v for k, v in record.items() if k not in ("label", "id", "note")}
                row.update(key=ident, test_case_key=ident, model_key="labelled")
                row_from_record(row, where, len(records))  # checked now: a bad field names its line
                labels.append(label == HIT)
                records.append(row)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the labelled set ({exc.strerror})") from None
    if header is None or not records:
        raise ConfigError(f"{path}: the labelled set has no items")
    return LabelledSet(Path(path), str(header["labelled_set"]), str(header.get("positive", "attack_success_rate")),
                       tuple(labels), tuple(records), digest.hexdigest())


def label_detector(cls: type, labelled: LabelledSet) -> tuple[list[bool], list[bool | None]]:
    """The set's labels and the detector's verdicts on its items (None: not assessed)."""
    from ..context import EvaluationContext
    from ..run_memo import RunMemo

    if labelled.positive not in {m.key for m in cls.metrics}:
        raise ConfigError(f"{labelled.path}: field 'positive': {cls.id} has no metric '{labelled.positive}'")
    evaluator = cls(cls.validate_params({}), EvaluationContext(memo=RunMemo(), label=f"measure {cls.id}"))
    rows = [row_from_record(dict(record), str(labelled.path), i) for i, record in enumerate(labelled.records)]
    verdicts: list[bool | None] = []
    for result in evaluator.evaluate(rows):
        value = result.values.get(labelled.positive)
        verdicts.append(None if value is None else value == 1.0)
    return list(labelled.labels), verdicts
