"""A run with a test suite, two Python hosts, perturb: copies and the General Semantic Robustness evaluator."""

from __future__ import annotations

import json
import re

import pytest

from sonar_core import api, names
from sonar_core.errors import ConfigError
from sonar_core.demo.lookup_host import FALLBACK
from sonar_core.demo.lookup_host import answer as lookup_answer
from sonar_core.execution import NO_HOSTS
from tiny_models import bert_encoder_folder

SUITE = [
    {"test_case_key": "france", "input": "What is the capital of France?", "expected_output": "Paris"},
    {"test_case_key": "japan", "input": "What is the capital of Japan?", "expected_output": "Tokyo"},
    {"test_case_key": "hamlet", "input": "Who wrote the play Hamlet?", "expected_output": "Shakespeare"},
]
#: A sampling model: the lookup table's answer with a tail that differs on every call.
CHATTY = '''from sonar_core.demo.lookup_host import answer as lookup
calls = [0]
def answer(prompt):
    calls[0] += 1
    return lookup(prompt) + f" (take {calls[0]})"
'''
PERTURB = {"perturbator": "butter_finger", "seed": 11, "params": {"perturbation_prob": 0.3}}


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return str(bert_encoder_folder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def run(tmp_path_factory, bert):
    folder = tmp_path_factory.mktemp("robustness_run")
    (folder / "chatty_sut.py").write_text(CHATTY, encoding="utf-8")
    suite = folder / "suite.jsonl"
    suite.write_text("\n".join(json.dumps(r) for r in SUITE) + "\n", encoding="utf-8")
    (folder / "run.yaml").write_text(json.dumps({
        "name": "robust", "test_suite": "suite.jsonl", "output_dir": "reports", "llm_cache": "cache.sqlite",
        "hosts": [{"key": "lookup", "kind": "python", "callable": "sonar_core.demo.lookup_host:answer",
                   "deterministic": True},
                  {"key": "chatty", "kind": "python", "callable": "chatty_sut:answer"}],
        "perturb": [PERTURB],
        "evaluators": ["factual_knowledge",
                       {"id": "general_semantic_robustness",
                        "params": {"bertscore_model": bert, "num_perturbations": 2, "num_baseline_samples": 3}}],
    }), encoding="utf-8")
    result = api.run(str(folder / "run.yaml"))
    assert result.status == "success", result.message
    return result


def _rows(result, evaluator_id):
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    [entry] = [e for e in record["result"]["executed_explainers"] if e["evaluator_id"] == evaluator_id]
    path = result.run_dir / entry["job_location"] / names.EVAL_RESULTS / "application_json" / "explanation.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_perturbed_copies_are_asked_of_every_host(run):
    rows = json.loads((run.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    keys = [(r["test_case_key"], r["model_key"]) for r in rows]
    assert sorted(keys) == sorted((tc, m) for tc in ("france", "france~butter_finger", "japan", "japan~butter_finger",
                                                     "hamlet", "hamlet~butter_finger") for m in ("lookup", "chatty"))
    copies = [r for r in rows if r["original_test_case_key"]]
    assert all(r["perturbation"] == "butter_finger" and r["test_case_key"] == r["original_test_case_key"] +
               "~butter_finger" for r in copies)
    for r in copies:
        if r["model_key"] == "lookup":
            assert r["actual_output"] == lookup_answer(r["input"])


def test_flip_problems_fire_where_a_typo_broke_the_lookup(run):
    rows = json.loads((run.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    broken = sorted(r["original_test_case_key"] for r in rows
                    if r["model_key"] == "lookup" and r["original_test_case_key"] and r["actual_output"] == FALLBACK)
    assert broken, "seed 11 at probability 0.3 should break at least one keyword"
    flips = sorted(p["problem_attrs"]["original_test_case_key"] for p in run.problems
                   if p.get("problem_attrs", {}).get("original_test_case_key")
                   and p["problem_attrs"].get("model_name", p["problem_attrs"].get("model_key")) == "lookup"
                   and p["evaluator_id"] == "factual_knowledge")
    assert flips == broken


def test_general_semantic_robustness_rows(run):
    rows = _rows(run, "general_semantic_robustness")
    by_key = {(r["test_case_key"], r["model_key"]): r for r in rows["results"]}
    lookup = by_key[("france", "lookup")]["details"]
    assert lookup["deterministic"] is True and lookup["determinism_check"] == "declared by its host"
    chatty = {**by_key[("france", "chatty")], **by_key[("france", "chatty")]["details"]}
    assert chatty["deterministic"] is False
    assert chatty["determinism_check"] == "3 prompt(s) asked twice: different answers"
    assert chatty["word_error_rate_baseline"] > 0
    assert chatty["word_error_rate"] == pytest.approx(max(0.0, chatty["word_error_rate_raw"]
                                                          - chatty["word_error_rate_baseline"]))
    # The core keeps perturb:'s copies from this evaluator (it perturbs the originals itself) and says so.
    assert sorted(by_key) == sorted((tc, m) for tc in ("france", "japan", "hamlet") for m in ("lookup", "chatty"))
    record = json.loads((run.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    [entry] = [e for e in record["result"]["executed_explainers"] if e["evaluator_id"] == "general_semantic_robustness"]
    report = (run.run_dir / entry["job_location"] / "work" / "report.md").read_text(encoding="utf-8")
    assert "> Perturbed copies of test cases (6 rows) are not scored: this evaluator perturbs the original test " \
           "cases itself." in report


def test_the_report_counts_the_evaluators_calls_to_the_hosts_as_the_costs_table_does(run):
    """#34: the hosts table said "asked in this run" 6 (the test suite's items) where the costs table counted
    every call, the evaluator's too. Now both kinds have their columns, and they add up to the costs' calls."""
    record = json.loads((run.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    html = (run.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    for host, asks in (("lookup", 9), ("chatty", 15)):
        row = re.search(rf'<tr data-host="{host}">(.*?)</tr>', html).group(1)
        cells = [int(c) for c in re.findall(r'<td class="num[^"]*"[^>]*>(\d+)</td>', row)]
        items, answered, suite, suite_cached, resumed, failed, evaluators, evaluators_cached = cells
        assert (items, answered, suite, suite_cached, resumed, failed) == (6, 6, 6, 0, 0, 0)  # 3 questions, 3 copies
        # The evaluator asks each host the 3 originals and 2 perturbed copies of each (9); chatty, not declared
        # deterministic, the 3 originals again (the determinism check, repeat 1) and once more (the third
        # baseline sample, repeat 2): 15. Some come from the response cache, which is no call.
        assert evaluators + evaluators_cached == asks
        assert suite + evaluators == record["costs"]["hosts"][host]["calls"]
    assert 'id="host-counts-note"' in html


def test_without_hosts_the_evaluator_is_skipped_saying_why(tmp_path, bert):
    dataset = tmp_path / "answers.json"
    dataset.write_text(json.dumps([{"test_case_key": "a", "model_key": "m", "input": "Q?", "actual_output": "A."}]),
                       encoding="utf-8")
    result = api.run({"dataset": str(dataset), "output_dir": str(tmp_path / "r"),
                      "evaluators": [{"id": "general_semantic_robustness", "params": {"bertscore_model": bert}}]})
    assert result.skipped == [{"evaluator": "general_semantic_robustness", "reason": NO_HOSTS}]


def test_a_perturbator_from_a_plugin_module_is_found_by_the_evaluator(tmp_path, monkeypatch, bert):
    """``perturbation_type`` names the perturbator ``reverse`` that only the run's ``plugins:`` module
    (the CLI's ``-p``) registers: the evaluator finds it through the run's plugin manager."""
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(SUITE[0]) + "\n", encoding="utf-8")
    config = {"test_suite": str(suite), "output_dir": str(tmp_path / "r"), "no_cache": True,
              "plugins": ["reverse_perturbator_plugin"],
              "hosts": [{"key": "echo", "kind": "python", "callable": "json:dumps", "deterministic": True}],
              "evaluators": [{"id": "general_semantic_robustness",
                              "params": {"perturbation_type": "reverse", "num_perturbations": 1,
                                         "bertscore_model": bert}}]}
    result = api.run(config)
    assert result.status == "success", result.message
    [row] = _rows(result, "general_semantic_robustness")["results"]
    row = row["details"]
    assert row["perturbed_prompts"] == ["?ecnarF fo latipac eht si tahW"]
    assert row["perturbed_answers"] == ['"?ecnarF fo latipac eht si tahW"']
    assert row["original_answer"] == '"What is the capital of France?"'
    # Without the plugin module, the name is unknown: the run stops before anything runs.
    with pytest.raises(ConfigError, match=r"^parameter 'perturbation_type' of evaluator 'general_semantic_robustness': "
                                          r"unknown perturbator 'reverse' \(known: base16, "):
        api.run({**config, "plugins": [], "output_dir": str(tmp_path / "r2")})
    assert not (tmp_path / "r2").exists()
