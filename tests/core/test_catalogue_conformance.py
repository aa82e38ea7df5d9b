"""Every built-in evaluator held against the checked catalogue table (tests/data/catalogue_004.yaml).

The table is the H2O Sonar catalogue (reference 004) read section by section; its header says how each
field was read and what is compared. A difference an evaluator does not declare in ``differences`` fails
here, and so does a declaration for which nothing differs (it would tell a reader something untrue).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sonar_core.contract import Difference, Evaluator
from sonar_core.plugins import get_plugin_manager

TABLE = Path(__file__).resolve().parents[1] / "data" / "catalogue_004.yaml"
#: The declaration fields a Difference may name (Difference.field).
FIELD = re.compile(r"^(inputs|model|formula|fallback|(metric|threshold|parameter):[a-z0-9_]+)$")
#: Fields the table cannot check: declared by hand, never reported stale.
UNCHECKED = ("formula", "fallback")


def load_table() -> list[dict[str, Any]]:
    """The 37 catalogue entries."""
    return yaml.safe_load(TABLE.read_text(encoding="utf-8"))


def _same(a: float, b: float) -> bool:
    return (math.isinf(a) and math.isinf(b) and (a > 0) == (b > 0)) or a == b


def _fmt(value: Any) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return repr(value) if isinstance(value, str) else str(value)


def _model_defaults(cls: type[Evaluator]) -> set[str]:
    """The default models an evaluator loads: its model parameters' defaults."""
    return {str(p.default) for p in cls.all_parameters()
            if (p.name in cls.model_params or p.name.endswith("_model")) and p.default}


def catalogue_differences(cls: type[Evaluator], entry: dict[str, Any]) -> dict[str, str]:
    """Each declaration field where ``cls`` differs from the table ``entry``, with what differs."""
    found: dict[str, str] = {}
    required = sorted(i.value for i in cls.required_inputs)
    if set(required) != set(entry["inputs"]):
        found["inputs"] = f"catalogue requires {', '.join(sorted(entry['inputs']))}; Sonar {', '.join(required) or 'none'}"
    metrics = {m.key: m for m in cls.metrics}
    for cm in entry["metrics"]:
        key = cm["key"]
        metric = metrics.get(key)
        if metric is None:
            found[f"metric:{key}"] = "catalogue metric missing"
            continue
        what = []
        low, high = cm["range"]
        if not (_same(metric.value_range[0], low) and _same(metric.value_range[1], high)):
            what.append(f"range catalogue [{_fmt(low)}, {_fmt(high)}], Sonar "
                        f"[{_fmt(metric.value_range[0])}, {_fmt(metric.value_range[1])}]")
        if cm["higher_is_better"] is not None and metric.higher_is_better != cm["higher_is_better"]:
            what.append(f"higher_is_better catalogue {cm['higher_is_better']}, Sonar {metric.higher_is_better}")
        if cm["primary"] is not None and metric.is_primary != cm["primary"]:
            what.append(f"primary catalogue {cm['primary']}, Sonar {metric.is_primary}")
        if what:
            found[f"metric:{key}"] = "; ".join(what)
        if cm["threshold"] is not None and not _same(metric.threshold, cm["threshold"]):
            found[f"threshold:{key}"] = f"catalogue {_fmt(cm['threshold'])}, Sonar {_fmt(metric.threshold)}"
    params = {p.name: p for p in cls.all_parameters()}
    primary = next((m for m in cls.metrics if m.is_primary), None)
    for cp in entry["parameters"]:
        name = cp["name"]
        param = params.get(name)
        if param is None:
            found[f"parameter:{name}"] = "catalogue parameter missing"
            continue
        what = []
        if "default" in cp:
            default = param.default
            if name == "metric_threshold" and default is None and primary is not None:
                default = primary.threshold  # unset means each metric's own threshold
            wanted = None if cp["default"] == "" else cp["default"]
            if default != wanted:
                what.append(f"default catalogue {_fmt(cp['default'])}, Sonar {_fmt(param.default)}")
        if "choices" in cp and set(param.choices) != set(cp["choices"]):
            what.append(f"choices catalogue {len(cp['choices'])} models, Sonar "
                        f"{len(param.choices) or 'none validated'}")
        if what:
            found[f"parameter:{name}"] = "; ".join(what)
    defaults = _model_defaults(cls)
    missing = [m["name"] for m in entry["models"] if m["sonar_name"] not in defaults]
    if missing:
        found["model"] = f"catalogue {', '.join(missing)}; Sonar {', '.join(sorted(defaults)) or 'none'}"
    return found


def conformance_errors(cls: type[Evaluator], entry: dict[str, Any]) -> list[str]:
    """One line per undeclared difference, stale declaration or malformed field; empty when ``cls``
    declares exactly how it differs from the catalogue."""
    errors = []
    declared = [d.field for d in cls.differences]
    for d in cls.differences:
        if not isinstance(d, Difference) or not FIELD.match(d.field) or not d.what or not d.why:
            errors.append(f"{cls.id}: malformed difference {d!r}")
    found = catalogue_differences(cls, entry)
    for field, what in found.items():
        if field not in declared:
            errors.append(f"{cls.id}: undeclared difference {field}: {what}")
    for field in declared:
        if field not in found and field not in UNCHECKED:
            errors.append(f"{cls.id}: declares a difference in {field} but it conforms to the catalogue")
    return errors


@pytest.fixture(scope="module")
def evaluators() -> dict[str, type[Evaluator]]:
    return get_plugin_manager().evaluators


def test_the_table_has_the_37_catalogue_sections_each_mapped_to_a_sonar_evaluator(evaluators):
    table = load_table()
    assert len(table) == 37
    ids = [e["sonar_id"] for e in table]
    assert len(set(ids)) == 37
    assert set(ids) <= set(evaluators)
    # The evaluators Sonar adds are not in the catalogue.
    assert set(evaluators) - set(ids) == {"factual_knowledge", "general_semantic_robustness", "ragas_context_relevance",
                                          # conversations and agents (docs/conversations.md)
                                          "tool_call_accuracy", "tool_call_f1", "trajectory_match", "goal_accuracy",
                                          "conversation_relevancy", "knowledge_retention", "role_adherence",
                                          # red-team detectors (docs/redteam.md)
                                          "canary_leak", "injection_marker", "private_data_leak", "refusal",
                                          "harmful_compliance"}


@pytest.mark.parametrize("entry", load_table(), ids=lambda e: e["sonar_id"])
def test_every_built_in_evaluator_declares_each_way_it_differs_from_the_catalogue(entry, evaluators):
    assert conformance_errors(evaluators[entry["sonar_id"]], entry) == []


def test_a_drifted_threshold_is_reported_by_the_checker(evaluators):
    bleu = evaluators["bleu"]
    entry = next(e for e in load_table() if e["sonar_id"] == "bleu")
    assert conformance_errors(bleu, entry) == []

    class DriftedBleu(bleu):
        metrics = tuple(dataclasses.replace(m, threshold=0.5) if m.key == "bleu_2" else m for m in bleu.metrics)

    assert conformance_errors(DriftedBleu, entry) == [
        "bleu: undeclared difference threshold:bleu_2: catalogue 0.75, Sonar 0.5"]

    class DeclaredBleu(DriftedBleu):
        differences = (Difference(what="BLEU-2 threshold 0.5", why="a test", field="threshold:bleu_2"),)

    assert conformance_errors(DeclaredBleu, entry) == []


def test_a_dropped_input_metric_parameter_or_model_is_reported(evaluators):
    sim = evaluators["answer_semantic_similarity"]
    entry = next(e for e in load_table() if e["sonar_id"] == "answer_semantic_similarity")

    class Drifted(sim):
        required_inputs = sim.required_inputs[1:]
        metrics = (dataclasses.replace(sim.metrics[0], higher_is_better=False, value_range=(-1.0, 1.0)),)
        differences = ()

    assert conformance_errors(Drifted, entry) == [
        "answer_semantic_similarity: undeclared difference inputs: catalogue requires actual_answer, "
        "expected_answer; Sonar actual_answer",
        "answer_semantic_similarity: undeclared difference metric:answer_similarity: range catalogue "
        "[0.0, 1.0], Sonar [-1.0, 1.0]; higher_is_better catalogue True, Sonar False",
        "answer_semantic_similarity: undeclared difference parameter:custom_eval_judge_config_key: "
        "catalogue parameter missing",
        "answer_semantic_similarity: undeclared difference model: catalogue BAAI/bge-small-en-v1.5; "
        "Sonar all-MiniLM-L6-v2",
    ]


def test_a_declaration_nothing_differs_for_or_a_malformed_one_is_reported(evaluators):
    bleu = evaluators["bleu"]
    entry = next(e for e in load_table() if e["sonar_id"] == "bleu")

    class Stale(bleu):
        differences = (Difference(what="x", why="y", field="threshold:bleu_1"),
                       Difference(what="x", why="y", field="metrics"),
                       Difference(what="formula", why="z", field="formula"))

    assert conformance_errors(Stale, entry) == [
        "bleu: malformed difference " + repr(Stale.differences[1]),
        "bleu: declares a difference in threshold:bleu_1 but it conforms to the catalogue",
        "bleu: declares a difference in metrics but it conforms to the catalogue",
    ]
