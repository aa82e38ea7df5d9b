"""The CLI: one-line errors with documented exit codes; a failing evaluator does not stop the run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

ROWS = [
    {"test_case_key": "t1", "model_key": "m1", "input": "Q1", "actual_output": "0.9", "expected_output": "0.1"},
    {"test_case_key": "t1", "model_key": "m2", "input": "Q1", "actual_output": "0.2", "expected_output": "0.1"},
]


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    return path


def invoke(monkeypatch, tmp_path, *args):
    runner = CliRunner()
    return runner.invoke(cli, ["run", *args, "--no-progress", "-o", str(tmp_path / "out")], catch_exceptions=False)


@pytest.fixture(autouse=True)
def _toy_on_path(monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))


def test_missing_dataset_file(monkeypatch, tmp_path):
    result = invoke(monkeypatch, tmp_path, "--dataset", str(tmp_path / "missing.json"), "-e", "toy_score",
                    "-p", "toy_plugin")
    assert result.exit_code == 3
    assert result.stderr == f"error: {tmp_path}/missing.json: dataset file not found\n"


def test_malformed_json_line(monkeypatch, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"input": "q", "actual_output": "1"}\nnot json\n', encoding="utf-8")
    result = invoke(monkeypatch, tmp_path, "-d", str(path), "-e", "toy_score", "-p", "toy_plugin")
    assert result.exit_code == 3
    assert result.stderr == f"error: {path}: line 2: malformed JSON (Expecting value at column 1)\n"


def test_non_utf8_csv(monkeypatch, tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"input,actual_output\nq,\xff\n")
    result = invoke(monkeypatch, tmp_path, "-d", str(path), "-e", "toy_score", "-p", "toy_plugin")
    assert result.exit_code == 3
    assert result.stderr == f"error: {path}: not UTF-8 (invalid byte 0xff on line 2)\n"


def test_csv_with_an_unbalanced_quote(monkeypatch, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('test_case_key,input,actual_output\nt1,q,0.5\n"t2,q,0.7\n', encoding="utf-8")
    result = invoke(monkeypatch, tmp_path, "-d", str(path), "-e", "toy_score", "-p", "toy_plugin")
    assert result.exit_code == 3
    assert result.stderr == (f"error: {path}: line 3, column 'test_case_key': unbalanced quote "
                             "(the quoted field that starts here is never closed)\n")
    assert not (tmp_path / "out").exists()


def test_unknown_evaluator_id(monkeypatch, tmp_path, dataset):
    result = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "nope", "-p", "toy_plugin")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown evaluator id 'nope' (known: ")
    assert "toy_score" in result.stderr and result.stderr.count("\n") == 1


def test_out_of_range_parameter(monkeypatch, tmp_path, dataset):
    result = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_slow", "--param", "toy_slow.factor=11",
                    "-p", "toy_plugin")
    assert result.exit_code == 2
    assert result.stderr == "error: parameter 'factor' of evaluator 'toy_slow' must be <= 10.0, got 11.0\n"


def test_unknown_config_key(monkeypatch, tmp_path, dataset):
    config = tmp_path / "c.yaml"
    config.write_text(f"dataset: {dataset}\nevaluatorz: [toy_score]\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(config)])
    assert result.exit_code == 2
    assert result.stderr == f"error: {config}: unknown configuration key 'evaluatorz' (did you mean 'evaluators'?)\n"


def test_missing_column_skips_evaluator_or_fails_in_strict_mode(monkeypatch, tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"input": "q", "actual_output": "0.7"}]), encoding="utf-8")
    # factual_knowledge needs an expected answer; the dataset has no such column.
    result = invoke(monkeypatch, tmp_path, "-d", str(path), "-e", "factual_knowledge", "-e", "toy_score",
                    "-p", "toy_plugin", "--run-id", "r")
    assert result.exit_code == 0
    assert "skipped factual_knowledge: the dataset has no column for required input(s): expected_answer" \
        in result.stderr
    run = json.loads((tmp_path / "out" / "r" / names.RUN_JSON).read_text())
    assert run["result"]["incompatible_explainer_ids"] == ["factual_knowledge"]
    strict = invoke(monkeypatch, tmp_path, "-d", str(path), "-e", "factual_knowledge", "-p", "toy_plugin",
                    "--strict", "--run-id", "s")
    assert strict.exit_code == 4
    assert strict.stderr == ("error: evaluator 'factual_knowledge' cannot run: the dataset has no column for "
                             "required input(s): expected_answer\n")
    assert not (tmp_path / "out" / "s").exists()  # checked before anything ran


def test_failing_evaluator_is_recorded_and_others_finish(monkeypatch, tmp_path, dataset):
    result = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_crash", "-e", "toy_score",
                    "-p", "toy_plugin", "--run-id", "r")
    assert result.exit_code == 1
    assert result.stderr.endswith("error: 1 evaluator(s) failed: toy_crash: RuntimeError: toy evaluator exploded\n")
    run_dir = tmp_path / "out" / "r"
    crash = next(run_dir.glob("explainer_*ToyCrash*"))
    assert (crash / names.FAILED_MARKER).read_text() == "RuntimeError: toy evaluator exploded\n"
    assert not (crash / names.DONE_MARKER).exists()
    log = next((crash / names.LOG_DIR).iterdir()).read_text()
    assert "Traceback" in log and "toy evaluator exploded" in log
    score = next(run_dir.glob("explainer_*ToyScore*"))
    assert (score / names.DONE_MARKER).is_file()
    events = [json.loads(line) for line in (run_dir / names.JOURNAL).read_text().splitlines()]
    failed = [e for e in events if e["message"] == "evaluator failed"]
    assert failed == [{**failed[0], "evaluator": "toy_crash", "error": "RuntimeError: toy evaluator exploded"}]
    run = json.loads((run_dir / names.RUN_JSON).read_text())
    assert run["status"] == "failed"
    assert [e["status"] for e in run["result"]["executed_explainers"]] == ["failed", "success"]


def test_fail_on_problems_gate(monkeypatch, tmp_path, dataset):
    # m2 scores 0.2 <= 0.25: a HIGH problem.
    result = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_score", "-p", "toy_plugin",
                    "--fail-on-problems", "high", "--run-id", "g")
    assert result.exit_code == 5
    assert result.stderr.endswith("error: 1 problem(s) at or above severity HIGH (--fail-on-problems)\n")
    passing = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_score", "-p", "toy_plugin",
                     "--threshold", "score=0.1", "--fail-on-problems", "LOW", "--run-id", "h")
    assert passing.exit_code == 0


def test_existing_run_dir_is_not_overwritten(monkeypatch, tmp_path, dataset):
    first = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_score", "-p", "toy_plugin", "--run-id", "r")
    assert first.exit_code == 0
    again = invoke(monkeypatch, tmp_path, "-d", str(dataset), "-e", "toy_score", "-p", "toy_plugin", "--run-id", "r")
    assert again.exit_code == 2
    assert again.stderr == (f"error: {tmp_path}/out/r: run directory exists already (use --resume to continue it)\n")


def test_describe_and_evaluators_list(monkeypatch):
    result = CliRunner().invoke(cli, ["describe", "toy_slow", "-p", "toy_plugin"])
    assert result.exit_code == 0
    assert "Toy slow" in result.output and "factor" in result.output and "metric_threshold" in result.output
    listing = CliRunner().invoke(cli, ["evaluators", "-p", "toy_plugin"])
    assert listing.exit_code == 0 and "toy_passfail" in listing.output
    missing = CliRunner().invoke(cli, ["describe", "nope"])
    assert missing.exit_code == 2 and missing.stderr.startswith("error: unknown evaluator id 'nope'")


def test_api_validates_overrides_of_a_config_object():
    import sonar_core
    from sonar_core.config import build_config
    from sonar_core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^<config>: configuration key 'batch_size': Input should be greater "
                                          r"than or equal to 1$"):
        sonar_core.run(build_config({"dataset": "demo"}), batch_size=0)
