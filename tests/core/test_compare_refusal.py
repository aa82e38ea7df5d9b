"""``sonar compare`` refuses what is not finished or not comparable (issues 35 and 34), unless
``--allow-partial``, which compares what is and says what it left out.

A run killed with SIGKILL after its first evaluator finished (tests/core/test_resume.py's toy run: toy_score,
then toy_slow, then toy_passfail) is compared with the same run finished.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

sys.path.insert(0, str(Path(__file__).parent.parent))
from compare_runs import build_runs  # noqa: E402

ROWS = [{"test_case_key": f"t{i}", "model_key": model, "input": f"Q{i}", "actual_output": f"0.{i % 10}",
         "expected_output": "0.1"} for i in range(20) for model in ("m1", "m2")]
TOY = ["-e", "toy_score", "-e", "toy_slow", "-e", "toy_passfail", "-p", "toy_plugin", "--run-id", "r"]


@pytest.fixture(scope="module")
def finished_and_killed(tmp_path_factory):
    import conftest

    folder = tmp_path_factory.mktemp("refusal")
    dataset = folder / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    sonar = str(Path(sys.executable).parent / "sonar")
    env = {**os.environ, "PYTHONPATH": str(conftest.CORE_TESTS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sonar, "run", "--no-progress", "-d", str(dataset), *TOY, "-o", str(folder / "finished")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    process = subprocess.Popen([sonar, "run", "--no-progress", "-d", str(dataset), *TOY, "-o", str(folder / "killed")],
                               env={**env, "SONAR_TOY_SLEEP": "0.25"}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    killed = folder / "killed" / "r"
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None and not list(
            killed.glob(f"explainer_*ToyScore*/{names.DONE_MARKER}")):
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return folder / "finished" / "r", killed


def _compare(*args):
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


def test_a_killed_run_is_refused_in_one_line(finished_and_killed, tmp_path):
    finished, killed = finished_and_killed
    assert json.loads((killed / names.RUN_JSON).read_text(encoding="utf-8"))["status"] == "running"
    for a, b in ((finished, killed), (killed, finished)):
        outcome = _compare(a, b, "-o", tmp_path / "cmp")
        side = "B" if b == killed else "A"
        assert outcome.exit_code == 3
        assert outcome.stderr == (f"error: {killed}: run {side} did not finish (status running; 2 evaluator(s) not "
                                  "finished: toy_passfail, toy_slow); resume it with `sonar run --resume`, or compare "
                                  "its finished evaluators with --allow-partial\n")
    assert not (tmp_path / "cmp").exists()


def test_allow_partial_compares_the_finished_evaluators_and_says_so(finished_and_killed, tmp_path):
    finished, killed = finished_and_killed
    outcome = _compare(finished, killed, "-o", tmp_path / "cmp", "--allow-partial")
    assert outcome.exit_code == 0, outcome.output
    data = json.loads((tmp_path / "cmp" / names.COMPARISON_JSON).read_text(encoding="utf-8"))
    assert [e["label_a"] for e in data["evaluators"]] == ["toy_score"]
    # Finished in A, not in B: never "not run in the other run".
    assert sorted((e["label"], e["reason"]) for e in data["evaluators_only_a"]) == [
        ("toy_passfail", "did not finish in the other run"), ("toy_slow", "did not finish in the other run")]
    assert sorted((e["label"], e["reason"]) for e in data["evaluators_only_b"]) == [
        ("toy_passfail", "did not finish (not run: the run stopped before it)"),
        ("toy_slow", "did not finish (not run: the run stopped before it)")]
    assert data["partial"] == {"b": {"status": "running", "not_finished": {
        "toy_slow": "not run: the run stopped before it", "toy_passfail": "not run: the run stopped before it"}}}
    warning = ("run B did not finish (status running): only its finished evaluators are compared; not finished: "
               "toy_slow (not run: the run stopped before it), toy_passfail (not run: the run stopped before it)")
    assert f"warning: {warning}\n" in outcome.stderr
    assert f"- **Partial:** {warning}" in (tmp_path / "cmp" / names.COMPARISON_MD).read_text(encoding="utf-8")
    assert '<ul id="partial"><li>run B did not finish' in (tmp_path / "cmp" / names.COMPARISON_HTML).read_text(
        encoding="utf-8")


def test_a_run_without_its_done_markers_or_still_running_is_refused(finished_and_killed, tmp_path):
    finished, _ = finished_and_killed
    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    (marker,) = copy.glob(f"explainer_*ToySlow*/{names.DONE_MARKER}")
    marker.unlink()
    outcome = _compare(finished, copy, "-o", tmp_path / "cmp")
    assert outcome.exit_code == 3
    assert outcome.stderr.startswith(f"error: {copy}: run B did not finish (1 evaluator(s) not finished: toy_slow); ")
    marker.write_text("done\n")
    record = json.loads((copy / names.RUN_JSON).read_text(encoding="utf-8"))
    (copy / names.RUN_JSON).write_text(json.dumps({**record, "status": "running"}), encoding="utf-8")
    outcome = _compare(finished, copy, "-o", tmp_path / "cmp")
    assert outcome.exit_code == 3
    assert outcome.stderr.startswith(f"error: {copy}: run B did not finish (status running); ")
    assert _compare(finished, finished, "-o", tmp_path / "same").exit_code == 0


@pytest.fixture(scope="module")
def runs_of_other_models(tmp_path_factory):
    """tests/compare_runs.py's run A, and a run of the same test cases by models A never ran."""
    import sonar_core
    from compare_runs import rows_a

    folder = tmp_path_factory.mktemp("models")
    before, _ = build_runs(folder)
    rows = [{**row, "model_key": row["model_key"].replace("m", "other-")} for row in rows_a()]
    (folder / "other.json").write_text(json.dumps(rows), encoding="utf-8")
    other = sonar_core.run(dataset=str(folder / "other.json"), evaluators=["text_matching"],
                           output_dir=str(folder / "reports"), run_id="other")
    return before, other.run_dir


def test_runs_that_share_no_model_are_refused_in_one_line(runs_of_other_models, tmp_path):
    """Issue 34: it used to print "1 evaluator(s) matched, 0 significant regression(s)" and exit 0."""
    before, other = runs_of_other_models
    outcome = _compare(before, other, "-o", tmp_path / "cmp")
    assert outcome.exit_code == 3
    assert outcome.stderr == ("error: the runs share no model (A: m1, m2; B: other-1, other-2): nothing to compare "
                              "(--allow-partial writes the comparison anyway, saying so)\n")
    assert not (tmp_path / "cmp").exists()
    partial = _compare(before, other, "-o", tmp_path / "cmp", "--allow-partial")
    assert partial.exit_code == 0, partial.output
    data = json.loads((tmp_path / "cmp" / names.COMPARISON_JSON).read_text(encoding="utf-8"))
    assert data["not_comparable"] == ["the runs share no model (A: m1, m2; B: other-1, other-2)"]
    assert data["partial"] == {} and data["models"] == [] and data["regressions"] == 0
    assert "warning: not comparable: the runs share no model (A: m1, m2; B: other-1, other-2)\n" in partial.stderr
