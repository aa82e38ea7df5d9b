"""The runner and the model services: models checked before scoring, one embedding cache per process."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sonar_core import names
from sonar_core.config import build_config
from sonar_core.models.embeddings import _PROCESS_CACHE
from sonar_core.errors import EXIT_USAGE
from sonar_core.models import ModelMissingError, get_store
from sonar_core.plugins import PluginManager
from sonar_core.execution import execute_run

from conftest import CORE_TESTS, write_json

ROWS = [
    {"test_case_key": "t1", "model_key": "m1", "input": "q", "actual_output": "The cat sat on the mat.",
     "expected_output": "A cat was sitting on the mat."},
    {"test_case_key": "t1", "model_key": "m2", "input": "q", "actual_output": "Stock prices fell sharply.",
     "expected_output": "A cat was sitting on the mat."},
    {"test_case_key": "t2", "model_key": "m1", "input": "q", "actual_output": "Paris is the capital of France.",
     "expected_output": "Paris."},
    {"test_case_key": "t2", "model_key": "m2", "input": "q", "actual_output": "The cat sat on the mat.",
     "expected_output": "Paris."},
]
#: Unique texts of ROWS: four answers (one repeated) and two expected answers.
UNIQUE_TEXTS = 5


@pytest.fixture
def model_host(monkeypatch):
    monkeypatch.syspath_prepend(str(CORE_TESTS))
    return PluginManager(extra_modules=["toy_model_plugin"], autoload=False).load()


def _run(tmp_path, plugins, evaluators, run_id="r"):
    dataset = write_json(tmp_path / "d.json", ROWS)
    config = build_config({"dataset": str(dataset), "output_dir": str(tmp_path / "out"), "run_id": run_id,
                           "evaluators": evaluators})
    return execute_run(config, plugins=plugins)


def test_each_unique_text_is_encoded_once_per_run_and_reused_by_the_next(tmp_path, model_host):
    _PROCESS_CACHE.clear()
    result = _run(tmp_path, model_host, [{"id": "toy_embed"}, {"id": "toy_embed", "name": "toy_embed_again"}])
    assert result.status == "success", result.message
    record = json.loads((result.run_dir / names.RUN_JSON).read_text())
    counters = record["services"]["embeddings"]["models"]["all-MiniLM-L6-v2"]
    # Two evaluators asked for 8 texts each (4 answers + 4 expected answers): 5 unique, encoded once.
    assert counters["requested"] == 16
    assert counters["unique_encoded"] == UNIQUE_TEXTS
    assert counters["cache_hits"] == 16 - UNIQUE_TEXTS
    assert counters["calls"] == 2
    journal = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text().splitlines()]
    info = [e for e in journal if e["message"] == "embedding cache info"]
    assert len(info) == 1 and info[0]["models"]["all-MiniLM-L6-v2"]["unique_encoded"] == UNIQUE_TEXTS

    second = _run(tmp_path, model_host, [{"id": "toy_embed"}], run_id="r2")
    again = json.loads((second.run_dir / names.RUN_JSON).read_text())["services"]["embeddings"]
    assert again["models"]["all-MiniLM-L6-v2"]["unique_encoded"] == 0
    assert again["models"]["all-MiniLM-L6-v2"]["cache_hits"] == 8
    assert again["model_loads"] == []  # the model was loaded once, by the first run


def test_scores_are_the_models_cosine_similarities(tmp_path, model_host):
    result = _run(tmp_path, model_host, ["toy_embed"])
    folder = result.run_dir / result.executed[0]["job_location"]
    rows = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    encoder = get_store().load_sentence_transformer("all-MiniLM-L6-v2", "cpu")
    assert len(rows["results"]) == 4
    for row in rows["results"]:
        a, e = encoder.encode([row["actual_output"], row["expected_output"]], normalize_embeddings=True)
        assert row["similarity"] == pytest.approx(float(np.dot(a, e)), abs=1e-6)


def test_a_listed_evaluator_whose_model_is_missing_stops_the_run_before_scoring(tmp_path, model_host):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelMissingError) as error:
        _run(tmp_path, model_host, [{"id": "toy_embed", "params": {"embedding_model": str(missing)}}])
    assert str(error.value) == (f"evaluator 'toy_embed': model '{missing}': no such folder "
                                f"(give the folder of a saved model)")
    assert not (tmp_path / "out" / "r").exists()  # nothing was written, nothing scored


def test_an_offline_group_evaluator_whose_model_is_missing_is_skipped_with_the_reason(tmp_path, model_host,
                                                                                      monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "empty-home"))
    result = _run(tmp_path, model_host, [{"id": "toy_embed"}, "offline"])
    assert result.status == "success"
    assert result.skipped == [{"evaluator": "toy_lm", "reason": "model 'SmolLM2-135M-Instruct' is not available: "
                                                                "provide it with `sonar models prepare smollm2`"}]
    assert [e["evaluator_id"] for e in result.executed] == ["toy_embed"]


def test_cli_missing_model_is_one_line_and_exit_2(tmp_path):
    dataset = write_json(tmp_path / "d.json", ROWS)
    env = {"PYTHONPATH": str(CORE_TESTS), "SONAR_HOME": str(tmp_path / "empty-home"), "PATH": "/usr/bin:/bin"}
    completed = subprocess.run(
        [sys.executable, "-m", "sonar_core.cli", "run", "-d", str(dataset), "-e", "toy_lm", "-p", "toy_model_plugin",
         "-o", str(tmp_path / "out")], capture_output=True, text=True, env=env)
    assert completed.returncode == EXIT_USAGE
    assert completed.stderr == ("error: evaluator 'toy_lm': model 'SmolLM2-135M-Instruct' is not available: "
                                "provide it with `sonar models prepare smollm2`\n")


def test_sonar_models_lists_both_embedded_models_with_their_state(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sonar_core.cli import cli

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))
    # Only the toy plugin: the built-in semantic evaluators name the same default model.
    monkeypatch.setenv("SONAR_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = CliRunner().invoke(cli, ["models", "-p", "toy_model_plugin"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
             for line in result.output.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    minilm, smollm = lines["all-MiniLM-L6-v2"], lines["SmolLM2-135M-Instruct"]
    # Columns: kind, present, source, location, used by, how to provide.
    assert minilm[:2] == ["embedding", "yes"] and minilm[4] == "toy_embed.embedding_model" and minilm[5] == "-"
    assert smollm[:2] == ["causal_lm", "NO"] and smollm[4] == "toy_lm.lm"
    assert smollm[5] == "sonar models prepare smollm2"
    assert str(tmp_path / "home" / "models") in result.output
