"""The labelled calibration sets: one per built-in judge evaluator (package data of
``sonar_plugins.judge``) plus the BYOP example for the judges demo's criterion (configs/judges_demo.yaml). Each must parse,
carry its provenance header, be balanced across its labels and fill every field its evaluator's
prompt reads."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest
import yaml

from sonar_core.dataset import _INPUT_COLUMNS
from sonar_core.judge_evaluator import JudgeEvaluator, placeholders_in
from sonar_core.plugins import PluginManager

from conftest import REPO

#: The judge's verdict labels each set is labelled with, in the header's order.
LABELS = {
    "contact_information": ["present", "absent"],
    "language_mismatch": ["same", "different"],
    "sexism": ["true", "false"],
    "stereotypes": ["stereotyped", "not_stereotyped"],
    "summarization_judge": ["good", "bad"],
    "fact_check": ["correct", "incorrect"],
    "context_relevancy": ["relevant", "irrelevant"],
    "byop": ["true", "false"],
    "goal_accuracy": ["achieved", "failed"],
    "conversation_relevancy": ["relevant", "irrelevant"],
    "knowledge_retention": ["retained", "forgotten"],
    "role_adherence": ["kept", "broken"],
}
HEADER_KEYS = {"calibration_set", "version", "labels", "source", "licence", "notes"}
SOURCE = "Written by hand for Sonar by its developers (2026-11); every item is original."
#: Every item carries these; the fields a prompt reads come on top.
ALWAYS = {"id", "label", "input", "actual_output", "note"}
#: An item of a set whose prompt reads a conversation carries it instead of a question and an answer.
ALWAYS_CONVERSATION = {"id", "label", "note"}
MIN_ITEMS = 40
BYOP_EXAMPLE = REPO / "examples" / "byop_calibration.jsonl"


def _shipped() -> dict[str, Path]:
    folder = resources.files("sonar_plugins.judge") / "calibration"
    return {Path(entry.name).stem: Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".jsonl")}


def _judges() -> dict[str, type[JudgeEvaluator]]:
    evaluators = PluginManager(autoload=True).load().evaluators
    return {key: cls for key, cls in evaluators.items()
            if issubclass(cls, JudgeEvaluator) and cls.__module__.startswith("sonar_plugins.judge.")}


def _demo_byop_params() -> dict:
    config = yaml.safe_load((REPO / "configs" / "judges_demo.yaml").read_text(encoding="utf-8"))
    entries = [e for e in config["evaluators"] if isinstance(e, dict) and e.get("id") == "byop"]
    assert len(entries) == 1, "the judges demo runs byop once; the example set is written for that criterion"
    return entries[0].get("params") or {}


def _fields_needed(cls: type[JudgeEvaluator], params: dict) -> set[str]:
    # A row is filled the way sonar_core.dataset maps catalogue inputs to dataset columns.
    template = params.get(cls.template_param) if cls.template_param else None
    return {column for needed in placeholders_in(template or cls.prompt_template)
            for column in _INPUT_COLUMNS[needed]}


def _read(path: Path) -> tuple[dict, list[dict]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and "\n\n" not in text, f"{path.name}: one JSON object per line, no blank lines"
    header, *items = [json.loads(line) for line in text.splitlines()]
    return header, items


def _cases() -> list[tuple[str, Path, dict]]:
    cases = [(key, path, {}) for key, path in sorted(_shipped().items())]
    return cases + [("byop", BYOP_EXAMPLE, _demo_byop_params())]


def test_every_builtin_judge_but_byop_ships_one_set_and_nothing_else_ships():
    judges = _judges()
    assert set(judges) == set(LABELS), "a new judge evaluator needs a calibration set and labels here"
    assert set(_shipped()) == set(judges) - {"byop"}


@pytest.mark.parametrize("key,path,params", _cases(), ids=[c[0] for c in _cases()])
def test_calibration_set(key, path, params):
    header, items = _read(path)
    assert set(header) == HEADER_KEYS
    assert header["calibration_set"] == key
    assert header["version"] == 1
    assert header["labels"] == LABELS[key]
    assert header["source"] == SOURCE
    assert header["licence"] == "Apache-2.0"
    assert header["notes"].strip()

    assert len(items) >= MIN_ITEMS
    ids = [item.get("id") for item in items]
    assert len(set(ids)) == len(ids), "ids are unique"
    assert all(isinstance(i, str) and i.startswith(f"{key}-") for i in ids), "ids carry the set's prefix"

    counts = Counter(item.get("label") for item in items)
    assert set(counts) == set(LABELS[key]), f"labels outside {LABELS[key]} or one missing: {dict(counts)}"
    assert len(set(counts.values())) == 1, f"unbalanced: {dict(counts)}"

    needed = _fields_needed(_judges()[key], params)
    fields = (ALWAYS_CONVERSATION if "conversation" in needed else ALWAYS) | needed
    for item in items:
        assert set(item) == fields, f"{item['id']}: fields {sorted(item)}, the prompt needs {sorted(fields)}"
        for name in fields - {"context", "conversation"}:
            assert isinstance(item[name], str) and item[name].strip(), f"{item['id']}: empty {name}"
        if "context" in fields:
            assert item["context"] and all(isinstance(c, str) and c.strip() for c in item["context"]), item["id"]
        if "conversation" in fields:
            turns = item["conversation"]
            assert any(t["role"] == "assistant" and t["content"].strip() for t in turns), item["id"]
            assert any(t["role"] == "user" for t in turns), item["id"]

    # The set loads as the calibration loads it (conversations checked turn by turn).
    from sonar_core.llm.calibration_sets import load_calibration_set

    assert len(load_calibration_set(path, key).items) == len(items)
    answers = [json.dumps(item.get("conversation")) + item.get("actual_output", "") for item in items]
    assert len(set(answers)) == len(answers), "no actual_output (or conversation) appears twice"
    hard = sum(item["note"].startswith(("hard negative", "hard positive")) for item in items)
    assert hard * 4 >= len(items), f"only {hard} hard items of {len(items)}"
