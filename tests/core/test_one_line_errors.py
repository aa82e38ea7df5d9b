"""Three tracebacks of issue 35 become one line each: a NUL in a path setting, a YAML alias bomb as a
parameter value, and errors that did not name their file (a damaged --llm-cache, a full disk)."""

from __future__ import annotations

import builtins
import errno
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli
from sonar_core.config import PATH_SETTINGS, build_config
from sonar_core.errors import ConfigError
from sonar_core.params import Param, ParameterError
from judge_server import JudgeServer, write_llm_configs

SONAR = str(Path(sys.executable).parent / "sonar")


@pytest.mark.parametrize("key", PATH_SETTINGS)
def test_a_nul_in_any_path_setting_is_one_line(key):
    settings = {"dataset": "demo", key: "reports\x00/x"}
    if key in ("standards", "standards_output"):
        settings["benchmark"] = "assistant_safety"
    with pytest.raises(ConfigError) as caught:
        build_config(settings, "c.yaml")
    assert str(caught.value) == f"c.yaml: configuration key '{key}': a path cannot hold a NUL character"


def test_a_nul_in_a_configuration_files_output_dir_is_one_line_from_the_command(tmp_path):
    (tmp_path / "c.yaml").write_text('dataset: demo\noutput_dir: "out\\0x"\n', encoding="utf-8")
    outcome = subprocess.run([SONAR, "run", "c.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (outcome.returncode, outcome.stderr) == (
        2, "error: c.yaml: configuration key 'output_dir': a path cannot hold a NUL character\n")
    assert list(tmp_path.iterdir()) == [tmp_path / "c.yaml"]


def _bomb(levels: int) -> str:
    """A flow list of ``levels`` anchored lists, each nine aliases of the one before: 9**levels strings."""
    parts = ['&l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    parts += [f"&l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


@pytest.mark.parametrize("evaluator, parameter", [("text_matching", "evaluate_retrieved_context"),
                                                  ("byop", "prompt_template")])
def test_an_alias_bomb_as_a_parameter_value_is_refused_in_one_line(tmp_path, evaluator, parameter):
    """Nine levels (387 million strings, 9 KB of YAML) ended in MemoryError after ~90 s."""
    config = tmp_path / "bomb.yaml"
    config.write_text(f"dataset: demo\nevaluators:\n  - id: {evaluator}\n    params:\n      {parameter}: {_bomb(9)}\n",
                      encoding="utf-8")
    outcome = subprocess.run([SONAR, "run", str(config), "-o", str(tmp_path / "out")], capture_output=True, text=True,
                             timeout=120)
    assert (outcome.returncode, outcome.stderr) == (
        2, f"error: {config}: configuration file stands for more than 1,000,000 values or 64,000,000 characters once "
           "its aliases are expanded; refusing it\n")
    assert not (tmp_path / "out").exists()


def test_a_parameter_error_quotes_at_most_200_characters_of_the_value(tmp_path):
    """Five levels (59,049 strings) pass the file's limit; the wrong type's message quotes a few items."""
    config = tmp_path / "c.yaml"
    config.write_text(f"dataset: demo\nevaluators:\n  - id: text_matching\n    params:\n"
                      f"      evaluate_retrieved_context: {_bomb(5)}\n", encoding="utf-8")
    outcome = subprocess.run([SONAR, "run", str(config), "-o", str(tmp_path / "out")], capture_output=True, text=True,
                             timeout=120)
    assert outcome.returncode == 2
    (line,) = outcome.stderr.splitlines()
    prefix = "error: parameter 'evaluate_retrieved_context' of evaluator 'text_matching' must be of type bool, got "
    assert line.startswith(prefix + "[['lol', 'lol', 'lol', 'lol', 'lol', 'lol', ...], [[")
    assert len(line) == len(prefix) + 200 and line.endswith("…")
    with pytest.raises(ParameterError) as caught:
        Param("n", int, 1, "a number").coerce("x" * 10_000, "e")
    head = "parameter 'n' of evaluator 'e' must be of type int, got 'xxx"
    assert str(caught.value).startswith(head) and len(str(caught.value)) <= len(head) - 4 + 200


def test_an_integer_past_a_floats_range_as_a_float_parameter_is_one_line():
    """Found by bench/fuzz.py --minutes 30 (the values surface): min_judge_kappa: 111...1 (400 digits) was an
    OverflowError traceback."""
    with pytest.raises(ParameterError) as caught:
        Param("min_judge_kappa", float, 0.4, "kappa").coerce(int("1" * 400), "contact_information")
    head = "parameter 'min_judge_kappa' of evaluator 'contact_information' must be of type float, got "
    assert str(caught.value).startswith(head + "1111") and len(str(caught.value)) <= len(head) + 200


def test_a_damaged_llm_cache_is_named_in_one_line(tmp_path):
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)  # a header, then nothing SQLite can read
    with JudgeServer(default="absent") as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        for calibrate in ("--calibrate", "--no-calibrate"):  # in calibration, and in an evaluator's scoring
            outcome = subprocess.run(
                [SONAR, "run", "--no-progress", "-d", "demo", "-e", "contact_information", calibrate,
                 "--calibration-items", "4", "--llm-configs", str(configs), "--llm-cache", str(cache),
                 "-o", str(tmp_path / calibrate)], capture_output=True, text=True, timeout=300)
            assert (outcome.returncode, outcome.stderr) == (
                3, f"error: {cache}: the LLM response cache cannot be used (DatabaseError: file is not a database); "
                   "move it away or name another file with --llm-cache\n"), calibrate
        assert server.calls == 0


class FullDisk:
    """The ``fail_at``-th file opened for writing under ``root`` is /dev/full: opening it succeeds, and its
    first flush fails with ENOSPC from the kernel, naming no file, as a full disk does."""

    def __init__(self, root: Path, fail_at: int) -> None:
        self.root, self.fail_at, self.writes, self.failed = str(root), fail_at, 0, None
        self.real = io.open

    def open(self, file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax") and str(file).startswith(self.root):
            self.writes += 1
            if self.writes == self.fail_at:
                self.failed = str(file)
                return self.real("/dev/full", mode.replace("x", "w").replace("a", "w"), *args, **kwargs)
        return self.real(file, mode, *args, **kwargs)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fail_at", [1, 2, 5, 9, 14])
def test_a_full_disk_names_the_file_that_could_not_be_written(tmp_path, monkeypatch, fail_at):
    rows = [{"test_case_key": f"t{i}", "model_key": "m", "input": "q", "actual_output": "Paris",
             "expected_output": "Paris"} for i in range(4)]
    (tmp_path / "d.json").write_text(json.dumps(rows), encoding="utf-8")
    disk = FullDisk(tmp_path / "out", fail_at)
    with monkeypatch.context() as patch:  # pathlib opens through io.open, the rest through builtins.open
        patch.setattr(io, "open", disk.open)
        patch.setattr(builtins, "open", disk.open)
        outcome = CliRunner().invoke(cli, ["run", "--no-progress", "-d", str(tmp_path / "d.json"), "-e",
                                           "factual_knowledge", "--run-id", "r", "-o", str(tmp_path / "out")])
    assert disk.failed is not None and outcome.exit_code == 6, outcome.output
    (line,) = outcome.stderr.splitlines()
    assert line.startswith(f"error: {disk.failed.removesuffix('.tmp')}: No space left on device; "), line
    assert "output folder" not in line
