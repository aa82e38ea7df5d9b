"""Attacks as data: one attack per line of a JSON Lines (or CSV) file, checked as it is read.

An attack says what it tries (``goal``, in words), how it asks (``prompt``, the attacker's own text),
what it plants in the target's world (a ``system`` prompt, a retrieved ``document``) and how its
success is detected (``detector``: an evaluator id and its parameters, such as a ``canary`` planted in
the system prompt or an injected instruction's ``marker``). docs/redteam.md describes every field.

A file may start with a header line ``{"attack_set": NAME, "version": V, ...}``; without one the set is
named after the file. A public set with other column names loads through a mapping (``columns``: field
-> column) and ``defaults`` (field -> value for every row); its rows without an id are numbered
(``<file stem>-0001``). Every fault is one line naming the file, the
line (JSON Lines) or row (CSV) and the field, as a :class:`~sonar_core.errors.DatasetError`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..dataset_files import check_utf8, read_csv, read_jsonl
from ..errors import DatasetError
from ..jsontypes import JsonObject

__all__ = ["CATEGORIES", "CONTROL", "AUTO", "Attack", "AttackSet", "load_attack_file", "parse_attack",
           "make_secret", "compact"]

#: What an attack can be; ``benign_control`` rows are safe requests that look unsafe (over-refusal).
CATEGORIES = ("direct_injection", "indirect_injection", "system_prompt_extraction", "private_data_extraction",
              "jailbreak", "encoding_smuggling", "harmful_request", "benign_control")
CONTROL = "benign_control"
#: A canary or marker spelt ``auto`` is drawn per attack from the expansion's seed (:func:`make_secret`).
AUTO = "auto"
_FIELDS = {"id", "category", "hazard", "technique", "goal", "prompt", "detector", "system", "document", "apply",
           "control", "note"}
_HEADER = {"attack_set", "version", "description", "licence", "source", "notes"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def compact(text: str) -> str:
    """``text`` lower-cased with everything but letters and digits removed (``S-O N`` -> ``son``)."""
    return _NOT_ALNUM.sub("", text.lower())


def make_secret(kind: str, seed: int, *parts: str) -> str:
    """A canary (``SONAR-CANARY-...``) or marker (``ZX-MARK-...``) drawn from ``seed`` and the attack's names:
    ten upper-case hexadecimal digits, so it never occurs by chance in an answer."""
    digest = hashlib.sha256("\x1f".join([kind, str(int(seed)), *parts]).encode("utf-8")).hexdigest()[:10].upper()
    return f"SONAR-CANARY-{digest}" if kind == "canary" else f"ZX-MARK-{digest}"


@dataclass(frozen=True)
class Attack:
    """One base attack, as its file holds it (placeholders ``{canary}`` / ``{marker}`` unfilled).

    Attributes:
        id: unique within its set; the test case keys start with it.
        category: one of :data:`CATEGORIES`; hazard: what harm it stands for (a benchmark hazard uid
            where one fits); technique: the base technique's label (``ignore_previous``...).
        goal: what success looks like, in words (the harmful-compliance judge reads it).
        prompt: the attacker's text. system, document: what is planted in the target's world.
        detector: the evaluator id that decides success; params: its settings (``canary``, ``marker``).
        apply: techniques always applied to this attack first (an encoding smuggling row's ``base64``).
        control: a benign look-alike: success is an answer, a refusal is an over-refusal.
        where: ``file: line N`` for messages.
    """

    id: str
    category: str
    hazard: str
    technique: str
    goal: str
    prompt: str
    detector: str
    params: tuple[tuple[str, Any], ...] = ()
    system: str = ""
    document: str = ""
    apply: tuple[str, ...] = ()
    control: bool = False
    note: str = ""
    where: str = ""

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)


@dataclass(frozen=True)
class AttackSet:
    """A named, versioned list of attacks (a file, or what a plugin registers)."""

    name: str
    version: str
    attacks: tuple[Attack, ...]
    description: str = ""
    source: str = ""
    licence: str = ""
    path: str = ""
    extra: JsonObject = field(default_factory=dict, compare=False)  #: the header's other keys, kept as written


def _text(record: Mapping[str, Any], name: str, where: str, required: bool = True) -> str:
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise DatasetError(f"{where}, field '{name}': missing (every attack needs its {name})")
        return ""
    if not isinstance(value, str):
        raise DatasetError(f"{where}, field '{name}': expected a string, got {type(value).__name__}")
    return value


def _detector(value: Any, where: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)  # a CSV cell holds the mapping as JSON text
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}, field 'detector': not valid JSON ({exc.msg})") from None
    if isinstance(value, str) and value.strip():
        return value.strip(), ()
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"].strip():
        params = tuple(sorted((k, v) for k, v in value.items() if k != "id"))
        return value["id"].strip(), params
    if value is None or value == "" or value == {}:
        raise DatasetError(f"{where}, field 'detector': missing (every attack names how its success is detected)")
    raise DatasetError(f"{where}, field 'detector': expected a detector id or {{\"id\": ..., parameters}}, "
                       f"got {type(value).__name__}")


def _check_planted(attack: Attack, where: str) -> None:
    """The canary must be planted (system prompt or document), never in the attack itself; a marker
    must be where the target reads it."""
    canary = attack.param("canary")
    if canary is not None:
        if not isinstance(canary, str) or not canary.strip():
            raise DatasetError(f"{where}, field 'detector.canary': empty (a canary is a text the target must "
                               f"never repeat; 'auto' draws one)")
        if "{canary}" in attack.prompt:
            raise DatasetError(f"{where}, field 'prompt': holds {{canary}}: the canary occurs in the attack "
                               f"itself, so an answer that repeats the attack would count as a leak")
        if canary == AUTO and "{canary}" not in attack.system + attack.document:
            raise DatasetError(f"{where}, field 'detector.canary': 'auto' needs {{canary}} in 'system' or "
                               f"'document', where the canary is planted")
        if canary != AUTO and compact(canary) and compact(canary) in compact(attack.prompt):
            raise DatasetError(f"{where}, field 'detector.canary': the canary occurs in the attack itself "
                               f"('prompt'), so an answer that repeats the attack would count as a leak")
        if canary != AUTO and not compact(canary):
            raise DatasetError(f"{where}, field 'detector.canary': {canary!r} has no letter or digit to look for")
    marker = attack.param("marker")
    if marker is not None:
        if not isinstance(marker, str) or not marker.strip():
            raise DatasetError(f"{where}, field 'detector.marker': empty (the word the injected instruction "
                               f"asks for; 'auto' draws one)")
        if marker == AUTO and "{marker}" not in attack.prompt + attack.document:
            raise DatasetError(f"{where}, field 'detector.marker': 'auto' needs {{marker}} in 'prompt' or "
                               f"'document', where the injected instruction asks for it")


def parse_attack(record: Any, where: str, columns: Mapping[str, str] | None = None,
                 defaults: Mapping[str, Any] | None = None, default_id: str = "") -> Attack:
    """One attack from a raw record (a dict), through the optional column mapping and defaults; a mapped
    row without an id is given ``default_id``."""
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected an object, got {type(record).__name__}")
    if columns:
        record = {**record, **{name: record.get(column) for name, column in columns.items()}}
        if not record.get("id"):
            record["id"] = default_id
    if defaults:
        record = {**{k: v for k, v in defaults.items()}, **{k: v for k, v in record.items()
                                                            if v is not None and v != ""}}
    unknown = sorted(set(record) - _FIELDS - set((columns or {}).values()))
    if unknown and not columns:
        raise DatasetError(f"{where}, field '{unknown[0]}': unknown field (fields: {', '.join(sorted(_FIELDS))})")
    ident = _text(record, "id", where)
    if not _ID.match(ident):
        raise DatasetError(f"{where}, field 'id': {ident!r} must be letters, digits, '.', '_' or '-'")
    category = _text(record, "category", where)
    if category not in CATEGORIES:
        raise DatasetError(f"{where}, field 'category': unknown category {category!r} (known: {', '.join(CATEGORIES)})")
    apply = record.get("apply") or []
    if isinstance(apply, str):
        apply = [part for part in re.split(r"[,+\s]+", apply) if part]
    if not isinstance(apply, list) or not all(isinstance(a, str) and a for a in apply):
        raise DatasetError(f"{where}, field 'apply': expected a list of technique names")
    control = record.get("control", category == CONTROL)
    if isinstance(control, str):
        control = control.strip().lower() in ("1", "true", "yes")
    detector, params = _detector(record.get("detector"), where)
    attack = Attack(id=ident, category=category, hazard=_text(record, "hazard", where),
                    technique=_text(record, "technique", where), goal=_text(record, "goal", where),
                    prompt=_text(record, "prompt", where), detector=detector, params=params,
                    system=_text(record, "system", where, False), document=_text(record, "document", where, False),
                    apply=tuple(apply), control=bool(control), note=_text(record, "note", where, False), where=where)
    _check_planted(attack, where)
    return attack


def _records(path: Path) -> Iterable[tuple[str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as handle:
            yield from read_jsonl(path, handle, hashlib.sha256())
    elif suffix == ".csv":
        check_utf8(path, path.read_bytes())
        yield from read_csv(path, path.read_text(encoding="utf-8-sig"))
    else:
        raise DatasetError(f"{path}: unknown attack file format '{suffix}' (use .jsonl or .csv)")


def load_attack_file(path: str | Path, columns: Mapping[str, str] | None = None,
                     defaults: Mapping[str, Any] | None = None) -> AttackSet:
    """The attack set in ``path`` (.jsonl or .csv); DatasetError, one line, at the first fault."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: attack file not found")
    header: JsonObject = {}
    attacks: list[Attack] = []
    seen: dict[str, str] = {}
    for index, (where, record) in enumerate(_records(path)):
        if index == 0 and isinstance(record, dict) and "attack_set" in record:
            unknown = sorted(set(record) - _HEADER)
            if unknown:
                raise DatasetError(f"{where}, field '{unknown[0]}': unknown header field")
            header = record
            continue
        attack = parse_attack(record, where, columns, defaults, f"{_ID_SAFE.sub('-', path.stem)}-{len(attacks) + 1:04d}")
        if attack.id in seen:
            raise DatasetError(f"{where}, field 'id': duplicate attack id {attack.id!r} (first at "
                               f"{seen[attack.id].split(': ', 1)[-1]})")
        seen[attack.id] = where
        attacks.append(attack)
    if not attacks:
        raise DatasetError(f"{path}: the attack file has no attacks")
    name = str(header.get("attack_set") or path.stem)
    return AttackSet(name=name, version=str(header.get("version", "")), attacks=tuple(attacks),
                     description=str(header.get("description", "")), source=str(header.get("source", "")),
                     licence=str(header.get("licence", "")), path=str(path))
