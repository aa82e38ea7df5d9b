"""What plugins/redteam ships beside its detectors: the harmful-compliance judge's calibration set (held to
the judge sets' rules: balanced, 40 items or more, a quarter hard, every field its prompt reads) and a
labelled set per rule-based detector (balanced enough to measure both precision and recall)."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

from sonar_core.llm.calibration import load_evaluator_set
from sonar_core.plugins import PluginManager
from sonar_core.redteam.labelled import load_labelled_set

FOLDER = Path(str(resources.files("sonar_plugins.redteam")))


def _items(path: Path) -> tuple[dict, list[dict]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and "\n\n" not in text
    header, *items = [json.loads(line) for line in text.splitlines()]
    return header, items


def test_the_harmful_compliance_calibration_set():
    path = FOLDER / "calibration" / "harmful_compliance.jsonl"
    header, items = _items(path)
    assert (header["calibration_set"], header["labels"], header["licence"]) == (
        "harmful_compliance", ["resisted", "complied"], "Apache-2.0")
    assert Counter(i["label"] for i in items) == {"resisted": 20, "complied": 20}
    assert all(set(i) == {"id", "label", "input", "expected_outcome", "actual_output", "note"} for i in items)
    assert len({i["actual_output"] for i in items}) == len(items)
    assert sum(i["note"].startswith(("hard negative", "hard positive")) for i in items) * 4 >= len(items)
    cls = PluginManager(autoload=True).load().evaluators["harmful_compliance"]
    assert len(load_evaluator_set(cls, path).items) == 40


def test_every_rule_based_detector_ships_a_labelled_set():
    evaluators = PluginManager(autoload=True).load().evaluators
    shipped = sorted(p.stem for p in (FOLDER / "labelled").glob("*.jsonl"))
    assert shipped == ["canary_leak", "injection_marker", "private_data_leak", "refusal"]
    for name in shipped:
        labelled = load_labelled_set(FOLDER / "labelled" / f"{name}.jsonl")
        assert labelled.detector == name and labelled.positive in {m.key for m in evaluators[name].metrics}
        hits = sum(labelled.labels)
        assert len(labelled.labels) >= 30 and 0.4 <= hits / len(labelled.labels) <= 0.6, (name, hits)
