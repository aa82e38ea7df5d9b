"""The demo's case files (``cases/*.json``): their format, and reading them into cases.

A case file holds one group of test cases and is ``{"category", "description", "cases": [...]}``;
its category is the file's name and every row of its cases carries it. A group may add ``corpus``
(the documents retrieved from, put on every row of the group) and ``input_prefix`` (put before
each case's input). A case has ``key``, ``input`` and ``answers`` (one per model in
:data:`MODELS`), and may have ``context``, ``context_by_model`` (a model whose retriever returned
something else, ``[]`` for a miss), ``expected_output``, ``output_condition``,
``output_constraints`` and a ``note`` for the reader (not written to the dataset).

``perturbed.json`` is ``{"description", "copies": [...]}``; a copy has ``original`` (a case key),
``perturbation``, ``answers``, and may have ``context_by_model`` and ``note``.

Every text is a string, or a list of pieces joined together: strings, ``{"secret": NAME}`` (a value
from :mod:`.fake_secrets`, so each fake credential is spelled once), ``{"base64": text}`` and
``{"base16": text}`` (the encoding of ``text``'s UTF-8 bytes, so the reader sees what an encoded
answer says) and ``{"repeat": sentences, "times": n}`` (``n`` copies joined by spaces: a looping
answer). Unknown fields and pieces are errors, so a misspelt one cannot silently drop data.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fake_secrets import SECRETS

__all__ = ["CASES_DIR", "GROUPS", "MODELS", "PERTURBED_FILE", "Case", "Perturbed", "CaseFileError",
           "render_text", "load_cases", "load_perturbed"]

CASES_DIR = Path(__file__).with_name("cases")

#: The case files (``cases/<group>.json``), in the order their rows appear in the dataset.
GROUPS = ("rag", "factual", "factual_and", "privacy", "security", "summarization", "classification", "looping")
PERTURBED_FILE = "perturbed.json"

#: The three fictional systems under test, in the order of their rows for each case.
MODELS = ("acme-gpt-large", "llama-3.1-8b-rag", "mistral-7b-chat")


class CaseFileError(ValueError):
    """A case file that does not follow the format described in this module's docstring."""


@dataclass
class Case:
    """One test case and each model's answer to it, texts resolved."""

    key: str
    category: str
    input: str
    answers: dict[str, str]
    expected_output: str = ""
    context: list[str] = field(default_factory=list)
    #: Per-model context where a model's retriever returned something else (e.g. nothing).
    context_by_model: dict[str, list[str]] = field(default_factory=dict)
    output_condition: str = ""
    output_constraints: list[str] = field(default_factory=list)
    #: The group's knowledge base documents, on every row of the case (RAG only).
    corpus: list[str] = field(default_factory=list)


@dataclass
class Perturbed:
    """A perturbed copy of a case: the input is derived, the answers are new."""

    original: str
    perturbation: str
    answers: dict[str, str]
    context_by_model: dict[str, list[str]] = field(default_factory=dict)


def render_text(text: Any, where: str) -> str:
    """A case file's text (a string, or a list of pieces) as the string it stands for."""
    if isinstance(text, str):
        return text
    if not isinstance(text, list):
        raise CaseFileError(f"{where}: a text is a string or a list of pieces, not {text!r}")
    return "".join(_render_piece(piece, where) for piece in text)


def _render_piece(piece: Any, where: str) -> str:
    if isinstance(piece, str):
        return piece
    keys = set(piece) if isinstance(piece, dict) else set()
    if keys == {"secret"}:
        if piece["secret"] not in SECRETS:
            raise CaseFileError(f"{where}: unknown secret {piece['secret']!r} (known: {', '.join(SECRETS)})")
        return SECRETS[piece["secret"]]
    if keys == {"base64"}:
        return base64.b64encode(piece["base64"].encode("utf-8")).decode("ascii")
    if keys == {"base16"}:
        return base64.b16encode(piece["base16"].encode("utf-8")).decode("ascii")
    if keys == {"repeat", "times"} and isinstance(piece["times"], int):
        return " ".join([piece["repeat"]] * piece["times"])
    raise CaseFileError(f"{where}: unknown piece {piece!r}")


def _check_keys(entry: dict, where: str, required: set[str], optional: set[str]) -> None:
    problems = []
    if required - set(entry):
        problems.append(f"missing {sorted(required - set(entry))}")
    if set(entry) - required - optional:
        problems.append(f"unknown {sorted(set(entry) - required - optional)}")
    if problems:
        raise CaseFileError(f"{where}: {'; '.join(problems)}")


def _answers(entry: dict, where: str) -> dict[str, str]:
    if set(entry["answers"]) != set(MODELS):
        raise CaseFileError(f"{where}: answers must be given for exactly {', '.join(MODELS)}")
    return {model: render_text(entry["answers"][model], f"{where} answer of {model}") for model in MODELS}


def _context_by_model(entry: dict, where: str) -> dict[str, list[str]]:
    return {model: [render_text(chunk, f"{where} context of {model}") for chunk in chunks]
            for model, chunks in entry.get("context_by_model", {}).items()}


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


_CASE_REQUIRED = {"key", "input", "answers"}
_CASE_OPTIONAL = {"note", "context", "context_by_model", "expected_output", "output_condition",
                  "output_constraints"}


def load_cases(cases_dir: Path = CASES_DIR) -> list[Case]:
    """Every original test case, group by group in :data:`GROUPS` order."""
    cases = []
    for group in GROUPS:
        path = cases_dir / f"{group}.json"
        data = _read(path)
        _check_keys(data, path.name, {"category", "description", "cases"}, {"corpus", "input_prefix"})
        if data["category"] != group:
            raise CaseFileError(f"{path.name}: category {data['category']!r} is not the file's name")
        prefix = data.get("input_prefix", "")
        for entry in data["cases"]:
            where = f"{path.name} case {entry.get('key', '?')!r}"
            _check_keys(entry, where, _CASE_REQUIRED, _CASE_OPTIONAL)
            cases.append(Case(
                key=entry["key"],
                category=group,
                input=prefix + render_text(entry["input"], f"{where} input"),
                answers=_answers(entry, where),
                expected_output=render_text(entry.get("expected_output", ""), f"{where} expected_output"),
                context=[render_text(chunk, f"{where} context") for chunk in entry.get("context", [])],
                context_by_model=_context_by_model(entry, where),
                output_condition=entry.get("output_condition", ""),
                output_constraints=list(entry.get("output_constraints", [])),
                corpus=list(data.get("corpus", [])),
            ))
    return cases


def load_perturbed(cases_dir: Path = CASES_DIR) -> list[Perturbed]:
    """The perturbed copies, in file order."""
    data = _read(cases_dir / PERTURBED_FILE)
    _check_keys(data, PERTURBED_FILE, {"description", "copies"}, set())
    copies = []
    for entry in data["copies"]:
        where = f"{PERTURBED_FILE} copy of {entry.get('original', '?')!r} ({entry.get('perturbation', '?')})"
        _check_keys(entry, where, {"original", "perturbation", "answers"}, {"note", "context_by_model"})
        copies.append(Perturbed(original=entry["original"], perturbation=entry["perturbation"],
                                answers=_answers(entry, where), context_by_model=_context_by_model(entry, where)))
    return copies
