"""Host kinds one by one: the local causal LM (seeded sampling), plugin kinds, the response cache."""

from __future__ import annotations

import json

import pytest

from sonar_core.config import build_config
from sonar_core.errors import ConfigError
from sonar_core.hosts.factory import HostFactoryServices
from sonar_core.hosts.registry import build_hosts, host_kinds
from sonar_core.llm import ResponseCache
from sonar_core.plugins import PluginFailure, PluginManager
from sonar_core.execution import execute_run


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    pytest.importorskip("transformers")
    from tiny_models import causal_lm_folder

    return causal_lm_folder(tmp_path_factory.mktemp("tiny-llama"), "llama")


def _hf_host(folder, store=None, **settings):
    services = HostFactoryServices(cache=store, device="cpu")
    entry = {"key": "tiny", "kind": "hf_causal_lm", "model": str(folder), "max_tokens": 8, **settings}
    return build_hosts([entry], services).get("tiny")


def test_hf_causal_lm_sampling_is_seeded_per_prompt_and_repeat(tiny_llama):
    host = _hf_host(tiny_llama, temperature=1.0)
    assert host.deterministic is False and host.kind == "hf_causal_lm"
    prompts = ["The cat sat on the mat.", "Paris is the capital of France."]
    first = host.ask_many(prompts)
    again = host.ask_many(prompts)
    assert [a.text for a in first] == [a.text for a in again]
    assert all(a.error is None and a.cached is False for a in first)
    # Another repeat is another seed: the sample differs.
    other = host.ask_many(prompts, repeat=1)
    assert [a.text for a in other] != [a.text for a in first]
    # Token counts come from the tokenizer: at most max_tokens generated.
    assert all(a.input_tokens > 0 and 0 < a.output_tokens <= 8 for a in first)
    assert all(a.cost is None for a in first)  # no price given
    greedy = _hf_host(tiny_llama, temperature=0.0, store=None)
    assert greedy.deterministic is True
    host.close()
    greedy.close()


def test_hf_causal_lm_answers_come_back_from_the_cache_with_their_duration(tiny_llama, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    host = _hf_host(tiny_llama, store=cache, temperature=0.7)
    fetched = host.ask("The cat sat on the mat.")
    cached = host.ask("The cat sat on the mat.")
    assert cached.cached is True and fetched.cached is False
    assert (cached.text, cached.duration, cached.input_tokens, cached.output_tokens) == \
        (fetched.text, fetched.duration, fetched.input_tokens, fetched.output_tokens)
    stored = json.loads(cache._db.execute("SELECT response FROM responses").fetchone()[0])
    assert stored["text"] == fetched.text and stored["seconds"] == fetched.duration
    host.close()
    cache.close()


def test_a_missing_local_model_fails_the_items_not_the_run(tmp_path):
    host = _hf_host(tmp_path / "no-model-here", store=None)
    answers = host.ask_many(["a", "b"])
    assert [a.text for a in answers] == [None, None]
    folder = tmp_path / "no-model-here"
    assert [a.error for a in answers] == [f"model '{folder}': no such folder (give the folder of a saved model) "
                                          f"(after 1 attempt)"] * 2


def test_register_host_kinds_hook_adds_a_plugin_kind(tmp_path, monkeypatch):
    """A plugin's register_host_kinds hook adds the kind ``echo`` after the built-in ones."""
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    plugins = PluginManager(extra_modules=["host_kind_plugin"], autoload=False).load()
    factories, owners = host_kinds(plugins)
    assert owners == {"openai_chat": "sonar_core", "rag_http": "sonar_core", "hf_causal_lm": "sonar_core",
                      "python": "sonar_core", "echo": "host_kind_plugin"}
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"test_case_key": "t1", "input": "hello"}]), encoding="utf-8")
    config = build_config({"test_suite": str(suite), "output_dir": str(tmp_path / "r"), "no_cache": True,
                           "hosts": [{"key": "e", "kind": "echo", "prefix": "you said: "}],
                           "prices": {"e": {"input_per_1k": 1000, "output_per_1k": 1000}},
                           "evaluators": ["looping_detection"]})
    result = execute_run(config, plugins=PluginManager(extra_modules=["host_kind_plugin"]).load())
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    # A plugin's host gives its own duration and cost (the price table is for the built-in kinds).
    assert [(r["actual_output"], r["actual_duration"], r["cost"]) for r in rows] == [("you said: hello", 0.5, None)]


def test_a_plugin_registering_a_taken_kind_fails_naming_both(tmp_path, monkeypatch):
    """A taken kind fails the plugin, as any broken plugin does: recorded, and its kinds left out."""
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    plugins = PluginManager(extra_modules=["host_kind_clash_plugin"], autoload=False).load()
    assert plugins.failures == [PluginFailure(
        "host_kind_clash_plugin", "register",
        "PluginError: host kind 'python' is registered by both plugin 'sonar_core' and plugin 'host_kind_clash_plugin'")]
    assert plugins.plugins == []
    factories, owners = host_kinds(plugins)
    assert owners == {"openai_chat": "sonar_core", "rag_http": "sonar_core", "hf_causal_lm": "sonar_core",
                      "python": "sonar_core"}
    assert factories["python"].spec_model.__name__ == "PythonSpec"


def test_evaluators_reach_the_run_hosts_through_ctx_hosts(tmp_path, monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"test_case_key": "t1", "input": "hello"}, {"test_case_key": "t2", "input": "x"}]),
                     encoding="utf-8")
    config = build_config({"test_suite": str(suite), "output_dir": str(tmp_path / "r"), "no_cache": True,
                           "hosts": [{"key": "e", "kind": "echo", "prefix": "> "},
                                     {"key": "j", "kind": "python", "callable": "json:dumps"}],
                           "evaluators": ["ask_again"]})
    result = execute_run(config, plugins=PluginManager(extra_modules=["host_kind_plugin"]).load())
    assert result.exit_code == 0, result.message
    folder = next(result.run_dir.glob("explainer_host_kind_plugin_AskAgainEvaluator_*"))
    rows = json.loads((folder / "global_llm_eval_results" / "application_json" / "explanation.json")
                      .read_text(encoding="utf-8"))["results"]
    assert [(r["model_key"], r["actual_output"], r["same_answer"]) for r in rows] == [
        ("e", "> hello", 1.0), ("j", '"hello"', 1.0), ("e", "> x", 1.0), ("j", '"x"', 1.0)]
    events = [json.loads(line) for line in (result.run_dir / "journal.jsonl").read_text().splitlines()]
    # The python host's second asking (repeat 1) is journaled with the evaluator's label.
    again = [e for e in events if e["message"] == "translated sut response" and e.get("evaluator") == "ask_again"]
    assert [(e["model_key"], e["test_case_key"], e["repeat"]) for e in again] == [("j", "t1", 1), ("j", "t2", 1)]
