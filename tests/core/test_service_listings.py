"""``sonar models --json``, ``sonar perturbators --json`` and ``sonar judges --json``: every listing
command has a machine-readable form (docs/cli.md, "Machine-readable output")."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sonar_core.cli import cli


def test_models_json_lists_each_model_with_where_it_is_and_who_uses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))  # an empty store: nothing is present
    result = CliRunner().invoke(cli, ["models", "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert list(listing) == ["schema_version", "store", "models", "plugin_failures"]
    assert listing["schema_version"] == "1.0" and listing["store"] == str(tmp_path / "home" / "models")
    models = {m["name"]: m for m in listing["models"]}
    assert all(list(m) == ["name", "kind", "present", "source", "location", "used_by", "provide"]
               for m in models.values())
    smol = models["SmolLM2-135M-Instruct"]
    assert smol["kind"] == "causal_lm" and smol["present"] is False and smol["provide"]
    assert {"perplexity.perplexity_model", "gptscore_question_answering.gpt_score_model"} <= set(smol["used_by"])
    assert "toxicity.fallback_model" in models["alt-profanity-check"]["used_by"]
    # The table is printed from the same listing.
    table = CliRunner().invoke(cli, ["models"]).output
    assert "SmolLM2-135M-Instruct" in table and str(tmp_path / "home" / "models") in " ".join(table.split())


def test_perturbators_json_with_text_gives_each_output():
    result = CliRunner().invoke(cli, ["perturbators", "--json", "--text", "hello world"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert list(listing) == ["schema_version", "perturbators", "plugin_failures"]
    by_name = {p["name"]: p for p in listing["perturbators"]}
    assert by_name["base16"] == {
        "name": "base16", "description": "The prompt's UTF-8 bytes in base16 (upper-case hex, RFC 4648), optionally "
                                         "in a template.",
        "seeded": False,
        "parameters": [{"name": "template", "type": "str", "default": "{encoded}",
                        "description": "Text sent instead of the prompt; {encoded} is replaced by the encoded prompt.",
                        "min": None, "max": None, "choices": []}],
        "output": "68656C6C6F20776F726C64",
    }
    assert "output" not in json.loads(CliRunner().invoke(cli, ["perturbators", "--json"]).stdout)["perturbators"][0]


def test_judges_json_lists_each_configuration_unchecked(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))
    configs = tmp_path / "llm.yaml"
    configs.write_text('llms:\n  remote: {base_url: "http://127.0.0.1:9/v1", model: m}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["judges", "--json", "--no-check", "--llm-configs", str(configs)])
    assert result.exit_code == 1  # local-smollm2 has no model in this empty store, even unchecked
    listing = json.loads(result.stdout)
    assert listing["schema_version"] == "1.0" and listing["configs_file"] == str(configs)
    assert listing["default_judge"] == "local-smollm2"
    remote = next(c for c in listing["configs"] if c["key"] == "remote")
    assert remote == {"key": "remote", "backend": "openai", "model": "m", "endpoint": "http://127.0.0.1:9/v1",
                      "api_key_env": "", "status": "not checked"}
    assert [c["key"] for c in listing["configs"]] == ["local-smollm2", "remote"]
