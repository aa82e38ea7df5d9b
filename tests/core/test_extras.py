"""An evaluator whose pip extra is not installed: listed with what it needs, described with how to install
it, skipped in a run with that reason (an error under --strict). The missing package is simulated by
making ``importlib.util.find_spec`` find no ``torch``, the way the check sees a base install."""

from __future__ import annotations

import importlib.util
import json
from typing import ClassVar

import pytest
from click.testing import CliRunner

from sonar_core import Evaluator, Input, Metric, RowResult, names
from sonar_core.cli import cli
from sonar_core.extras import missing_modules

REASON = ("needs sonar-eval[models], which is not installed (no module 'torch'); "
          "install it with: pip install 'sonar-eval[models]'")


@pytest.fixture
def no_torch(monkeypatch):
    """``torch`` (and its submodules) cannot be found, as on a base install."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_missing_modules_finds_without_importing(no_torch):
    assert missing_modules(["torch", "json", "sonar_no_such_module_1f3a"]) == ["torch", "sonar_no_such_module_1f3a"]


def test_listing_shows_what_a_missing_extra_needs(no_torch):
    listing = json.loads(CliRunner().invoke(cli, ["evaluators", "--json"]).stdout)
    by_id = {e["id"]: e for e in listing["evaluators"]}
    assert (by_id["perplexity"]["extra"], by_id["perplexity"]["needs"]) == ("models", "sonar-eval[models]")
    # ragas's own modules are there; its embeddings need the models extra's torch.
    assert (by_id["answer_correctness"]["extra"], by_id["answer_correctness"]["needs"]) == (
        "ragas,models", "sonar-eval[ragas,models]")
    assert (by_id["faithfulness"]["extra"], by_id["faithfulness"]["needs"]) == ("ragas", None)
    assert (by_id["rouge"]["extra"], by_id["rouge"]["needs"]) == (None, None)

    table = CliRunner().invoke(cli, ["evaluators"]).stdout
    header = next(line for line in table.splitlines() if "Id" in line and "Name" in line)
    assert header.rstrip("┃ ").endswith("Needs")
    perplexity = next(line for line in table.splitlines() if line.startswith("│ perplexity "))
    assert perplexity.rstrip("│ ").endswith("sonar-eval[models]")
    rouge = next(line for line in table.splitlines() if line.startswith("│ rouge "))
    assert "sonar-eval" not in rouge


def test_listing_has_no_needs_column_when_everything_is_installed():
    table = CliRunner().invoke(cli, ["evaluators"]).stdout
    assert "Needs" not in table


def test_describe_says_how_to_install(no_torch):
    described = CliRunner().invoke(cli, ["describe", "perplexity"]).stdout
    assert f"Not installed: {REASON}\n" in described
    assert "Not installed" not in CliRunner().invoke(cli, ["describe", "rouge"]).stdout
    as_json = json.loads(CliRunner().invoke(cli, ["describe", "perplexity", "--json"]).stdout)
    assert as_json["needs"] == "sonar-eval[models]"


def _run(tmp_path, run_id, *args):
    return CliRunner().invoke(cli, ["run", "--dataset", "demo", "-e", "rouge", "-e", "perplexity", "--no-progress",
                                    "-o", str(tmp_path), "--run-id", run_id, *args])


def test_run_skips_an_evaluator_whose_extra_is_missing(no_torch, tmp_path):
    result = _run(tmp_path, "r")
    assert result.exit_code == 0, result.output
    assert f"  skipped perplexity: {REASON}\n" in result.stderr
    run = json.loads((tmp_path / "r" / names.RUN_JSON).read_text())
    assert run["result"]["incompatible_explainer_ids"] == ["perplexity"]
    assert [e["evaluator_id"] for e in run["result"]["executed_explainers"]] == ["rouge"]


def test_strict_run_stops_on_a_missing_extra(no_torch, tmp_path):
    result = _run(tmp_path, "s", "--strict")
    assert result.exit_code == 4
    assert result.stderr == f"error: evaluator 'perplexity' cannot run: {REASON}\n"
    assert not (tmp_path / "s").exists()  # checked before anything ran


class _NeedsNothingReal(Evaluator):
    id = "needs_a_missing_module"
    display_name: ClassVar[str] = "Needs a missing module"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("m", "M", "d", is_primary=True),)
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ("sonar_no_such_module_1f3a", "json")

    def evaluate(self, rows):
        return [RowResult({"m": 1.0}) for _ in rows]


def test_declaration_reasons():
    # A module that really is absent (no simulation).
    assert _NeedsNothingReal.needs() == "sonar-eval[models]"
    assert _NeedsNothingReal.missing_extra() == (
        "needs sonar-eval[models], which is not installed (no module 'sonar_no_such_module_1f3a'); "
        "install it with: pip install 'sonar-eval[models]'")
    assert _NeedsNothingReal.declaration_problem() is None

    class NoExtra(_NeedsNothingReal):
        extra = None

    assert NoExtra.declaration_problem() == "NoExtra declares needs_modules but no 'extra' that installs them"


def test_local_judge_needs_the_models_extra(no_torch, tmp_path):
    # The default judge runs SmolLM2 on this machine: on a base install the judge evaluators are
    # skipped saying what to install, instead of failing every row.
    result = CliRunner().invoke(cli, ["run", "--dataset", "demo", "-e", "sexism", "--no-progress", "-o", str(tmp_path),
                                      "--run-id", "j", "--judge", "local-smollm2"])
    assert result.exit_code == 0, result.output
    assert f"  skipped sexism: judge 'local-smollm2' is not available: {REASON}\n" in result.stderr


def test_a_local_model_host_needs_the_models_extra(no_torch, tmp_path):
    # A host that would run a model on this machine stops the run before it starts, naming the extra.
    suite = tmp_path / "suite.jsonl"
    suite.write_text('{"test_case_key": "t", "input": "q"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "--test-suite", str(suite), "-e", "text_matching", "--no-progress",
                                      "-o", str(tmp_path), "--host", "{key: m, kind: hf_causal_lm, model: smollm2}"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == f"error: hosts[0] (key 'm'): host kind 'hf_causal_lm' {REASON}"

