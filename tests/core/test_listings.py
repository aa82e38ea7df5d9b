"""``sonar evaluators --json``, ``sonar describe ID --json`` and ``sonar plugins --json``: exact shapes.

The toy plugin's declarations (tests/core/toy_plugin.py) are written out below by hand, so a
change of the listing shape, or of what a field means, fails here. docs/cli.md documents them.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import BUILT_IN
from sonar_core.cli import cli

# Entry points off: only the toy plugin, named with -p, is loaded.
NO_AUTOLOAD = {"SONAR_DISABLE_PLUGIN_AUTOLOAD": "1", "SONAR_PLUGINS": None}

TOY_PASSFAIL_SUMMARY = {
    "id": "toy_passfail",
    "qualified_name": "toy_plugin.ToyPassFailEvaluator",
    "display_name": "Toy pass/fail",
    "tagline": "",
    "plugin": "toy_plugin",
    "kind": "bool",
    "category": "Generation",
    "problem_type": "accuracy",
    "compatibility": ["llm", "rag"],
    "required_inputs": ["actual_answer"],
    "optional_inputs": ["retrieved_context"],
    "requires_judge": False,
    "supports_gpu": False,
    "offline": True,
    "primary_metric": "passes",
    "extra": None,
    "needs": None,
}


def _toy_summary(eid, cls_name, display_name, kind, primary, tagline=""):
    return {
        "id": eid, "qualified_name": f"toy_plugin.{cls_name}", "display_name": display_name, "tagline": tagline,
        "plugin": "toy_plugin", "kind": kind, "category": "Generation", "problem_type": "accuracy",
        "compatibility": ["llm", "rag"], "required_inputs": ["actual_answer"], "optional_inputs": [],
        "requires_judge": False, "supports_gpu": False, "offline": True, "primary_metric": primary,
        "extra": None, "needs": None,
    }


COMMON_PARAMETERS = [
    {"name": "metric_threshold", "type": "float", "default": None,
     "description": "Threshold of the primary metric: a model whose mean is on the wrong side of it is reported "
                    "as a problem. Empty means the metric's default threshold.",
     "min": None, "max": None, "choices": []},
    {"name": "save_llm_result", "type": "bool", "default": True,
     "description": "Save the evaluated LLM dataset with every metric (llm-eval-results JSON, CSV and .jay).",
     "min": None, "max": None, "choices": []},
]


@pytest.fixture(autouse=True)
def _toy_on_path(monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))


def invoke(*args):
    result = CliRunner().invoke(cli, list(args), env=NO_AUTOLOAD, catch_exceptions=False)
    return result


def test_plugins_json_exact_text():
    result = invoke("plugins", "--json", "-p", "toy_plugin")
    assert result.exit_code == 0
    assert result.stdout == """\
{
  "schema_version": "1.0",
  "plugins": [
    {
      "name": "toy_plugin",
      "module": "toy_plugin",
      "distribution": "",
      "version": "",
      "hooks": [
        "register_evaluators"
      ],
      "evaluators": [
        "toy_score",
        "toy_passfail",
        "toy_crash",
        "toy_slow"
      ]
    }
  ],
  "failures": []
}
"""


def test_plugins_json_lists_a_failed_plugin():
    result = invoke("plugins", "--json", "-p", "toy_plugin", "-p", "no_such_sonar_module")
    assert result.exit_code == 0
    listing = json.loads(result.stdout)
    assert [p["name"] for p in listing["plugins"]] == ["toy_plugin"]
    assert listing["failures"] == [{"plugin": "no_such_sonar_module", "stage": "import",
                                    "error": "ModuleNotFoundError: No module named 'no_such_sonar_module'"}]


def test_evaluators_json_exact():
    result = invoke("evaluators", "--json", "-p", "toy_plugin")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "schema_version": "1.0",
        "evaluators": [  # sorted by id
            {**_toy_summary("toy_crash", "ToyCrashEvaluator", "Toy crash", "score", "nothing"),
             "metric_keys": ["nothing"]},
            {**TOY_PASSFAIL_SUMMARY,
             "metric_keys": ["passes", "failures", "retrieval_failures", "generation_failures", "parse_failures"]},
            {**_toy_summary("toy_score", "ToyScoreEvaluator", "Toy score", "score", "score",
                            tagline="Scores each answer with the number it contains."),
             "metric_keys": ["score", "error_rate"]},
            {**_toy_summary("toy_slow", "ToySlowEvaluator", "Toy slow", "score", "length"),
             "metric_keys": ["length"]},
        ],
        "plugin_failures": [],
    }
    assert result.stdout.startswith('{\n  "schema_version": "1.0",\n  "evaluators": [\n    {\n      "id": "toy_crash",')


def test_describe_json_exact():
    result = invoke("describe", "toy_passfail", "--json", "-p", "toy_plugin")
    assert result.exit_code == 0

    def metric(key, name, description, higher, role, raises=True, primary=False):
        return {"key": key, "display_name": name, "description": description, "value_range": [0.0, 1.0],
                "higher_is_better": higher, "threshold": 0.5, "is_primary": primary, "role": role,
                "raises_problems": raises, "model_level": False}

    assert json.loads(result.stdout) == {
        "schema_version": "1.0",
        **TOY_PASSFAIL_SUMMARY,
        "description": "",
        "needs_all_rows": False,
        "sensitive_outputs": False,
        "metrics": [
            metric("passes", "Passes", "Answer contains ok.", True, "pass", primary=True),
            metric("failures", "Failures", "Answer lacks ok.", False, "fail", raises=False),
            metric("retrieval_failures", "Retrieval failures", "Context lacks ok.", False, "retrieval_failure"),
            metric("generation_failures", "Generation failures", "Same as failures.", False, "generation_failure",
                   raises=False),
            metric("parse_failures", "Parse failures", "Answer was '??'.", False, "parse_failure"),
        ],
        "parameters": COMMON_PARAMETERS,
        # A plugin's evaluator outside the catalogue declares no difference from it.
        "differences": [],
    }


def test_describe_json_parameters_and_ranges():
    result = invoke("describe", "toy_slow", "--json", "-p", "toy_plugin")
    described = json.loads(result.stdout)
    assert described["metrics"] == [{
        "key": "length", "display_name": "Length", "description": "Characters in the answer, times factor.",
        "value_range": [0.0, 1e9], "higher_is_better": True, "threshold": 1.0, "is_primary": True, "role": None,
        "raises_problems": True, "model_level": False,
    }]
    assert described["parameters"] == [
        {"name": "factor", "type": "float", "default": 1.0, "description": "Multiplies the answer length.",
         "min": 0.0, "max": 10.0, "choices": []},
        *COMMON_PARAMETERS,
    ]


def test_describe_json_unknown_id_is_a_one_line_error():
    result = invoke("describe", "nope", "--json", "-p", "toy_plugin")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == ("error: unknown evaluator id 'nope' (known: toy_crash, toy_passfail, toy_score, "
                             "toy_slow)\n")


def test_built_in_listing_and_descriptions():
    result = CliRunner().invoke(cli, ["evaluators", "--json"], env={"SONAR_PLUGINS": None,
                                                                     "SONAR_DISABLE_PLUGIN_AUTOLOAD": None})
    assert result.exit_code == 0
    listing = json.loads(result.stdout)
    assert {e["id"] for e in listing["evaluators"]} == BUILT_IN
    assert listing["plugin_failures"] == []
    by_id = {e["id"]: e for e in listing["evaluators"]}
    assert by_id["factual_knowledge"] == {
        "id": "factual_knowledge",
        "qualified_name": "sonar_plugins.knowledge.factual_knowledge.FactualKnowledgeEvaluator",
        "display_name": "Factual knowledge",
        "tagline": "Does the answer contain the expected fact?",
        "plugin": "knowledge",
        "kind": "score",
        "category": "Generation",
        "problem_type": "accuracy",
        "compatibility": ["llm", "rag"],
        "required_inputs": ["expected_answer", "actual_answer"],
        "optional_inputs": [],
        "requires_judge": False,
        "supports_gpu": False,
        "offline": True,
        "primary_metric": "factual_knowledge",
        "extra": None,
        "needs": None,
        "metric_keys": ["factual_knowledge", "factual_knowledge_quasi_exact"],
    }
    assert by_id["text_matching"]["kind"] == "bool"
    assert by_id["text_matching"]["required_inputs"] == ["actual_answer", "conditions"]

    described = json.loads(CliRunner().invoke(cli, ["describe", "factual_knowledge", "--json"]).stdout)
    assert [(p["name"], p["type"], p["default"], p["choices"]) for p in described["parameters"]] == [
        ("target_output_delimiter", "str", "<OR>", []),
        ("logical_operator", "str", "OR", ["OR", "AND"]),
        ("metric_threshold", "float", None, []),
        ("save_llm_result", "bool", True, []),
    ]
    assert [(m["key"], m["threshold"], m["is_primary"]) for m in described["metrics"]] == [
        ("factual_knowledge", 0.5, True), ("factual_knowledge_quasi_exact", 0.5, False),
    ]


def _setting(name, type_name, default=None, required=False):
    return {"name": name, "type": type_name, "required": required, "default": default}


def test_hosts_json_exact_with_a_plugin_kind():
    result = invoke("hosts", "--json", "-p", "host_kind_plugin")
    assert result.exit_code == 0, result.output
    listing = json.loads(result.output)
    assert listing["schema_version"] == "1.0" and listing["plugin_failures"] == []
    assert listing["common_settings"] == [
        _setting("key", "str", required=True), _setting("kind", "str", required=True),
        _setting("deterministic", "bool | None"), _setting("cache", "bool", True), _setting("timeout", "float", 60.0),
        _setting("retries", "int", 3), _setting("backoff", "float", 0.5), _setting("max_concurrency", "int", 8),
        _setting("requests_per_minute", "float | None"), _setting("description", "str", ""),
        _setting("adaptive_concurrency", "bool", True),
    ]
    kinds = {entry["kind"]: entry for entry in listing["host_kinds"]}
    assert list(kinds) == ["echo", "hf_causal_lm", "openai_chat", "python", "rag_http"]
    # A plugin kind registered without a spec: no settings to show.
    assert kinds["echo"] == {"kind": "echo", "plugin": "host_kind_plugin", "description": "", "settings": None}
    assert kinds["python"] == {
        "kind": "python", "plugin": "sonar_core",
        "description": "A Python function named module:function in the run configuration; it returns the answer.",
        "settings": [_setting("cache", "bool", False), _setting("retries", "int", 0),
                     _setting("max_concurrency", "int", 1), _setting("callable", "str", required=True),
                     _setting("chat", "bool", False)]}
    assert kinds["rag_http"]["settings"] == [_setting("url", "str", required=True),
                                             _setting("api_key_env", "str | None")]


def test_hosts_table_names_each_kind_and_its_required_settings():
    result = invoke("hosts")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Settings every kind has: key (required), kind (required), deterministic=None, "
                                    "cache=True, timeout=60.0,")
    for text in ("openai_chat", "model (required)", "url (required)", "callable (required)", "hf_causal_lm"):
        assert text in result.output
