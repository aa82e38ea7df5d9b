"""A run killed with SIGKILL after its first evaluator finished resumes to the same artifacts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from sonar_core import names

ROWS = [
    {"test_case_key": f"t{i}", "model_key": model, "input": f"Q{i}", "actual_output": f"0.{i % 10}",
     "expected_output": "0.1", "actual_duration": 1.0, "cost": 0.001}
    for i in range(20) for model in ("m1", "m2")
]
EVALUATORS = ["-e", "toy_score", "-e", "toy_slow", "-e", "toy_passfail"]


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run, except those that hold wall-clock times."""
    files = {}
    for path in sorted(run_dir.rglob("*")):
        rel = str(path.relative_to(run_dir))
        if not path.is_file() or rel in (names.RUN_JSON, names.JOURNAL) or f"/{names.LOG_DIR}/" in f"/{rel}":
            continue
        data = path.read_bytes()
        if rel == names.INDEX_HTML:
            created = json.loads((run_dir / names.RUN_JSON).read_text())["created"]
            data = data.replace(created.encode(), b"<created>")
        files[rel] = data
    return files


def _sonar(sonar_cli, env, *args, **kwargs):
    return subprocess.run([sonar_cli, "run", "--no-progress", *args], env=env, capture_output=True, text=True,
                          timeout=120, **kwargs)


def test_sigkill_then_resume_matches_uninterrupted_run(tmp_path, sonar_cli, toy_env):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    common = ["-d", str(dataset), *EVALUATORS, "-p", "toy_plugin", "--run-id", "r"]

    slow_env = {**toy_env, "SONAR_TOY_SLEEP": "0.25"}  # 40 rows x 0.25 s: toy_slow takes ~10 s
    # The uninterrupted run to compare with needs nothing of the killed one: it runs meanwhile.
    fresh = subprocess.Popen([sonar_cli, "run", "--no-progress", *common, "-o", str(tmp_path / "fresh")], env=toy_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    process = subprocess.Popen([sonar_cli, "run", "--no-progress", *common, "-o", str(tmp_path / "killed")],
                               env=slow_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_dir = tmp_path / "killed" / "r"
    deadline = time.time() + 60
    first_done = None
    while time.time() < deadline and process.poll() is None:
        first_done = next(run_dir.glob(f"explainer_*ToyScore*/{names.DONE_MARKER}"), None) if run_dir.exists() else None
        if first_done:
            break
        time.sleep(0.05)
    assert first_done is not None, "the first evaluator never finished"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert not list(run_dir.glob(f"explainer_*ToySlow*/{names.DONE_MARKER}"))
    assert not (run_dir / names.INDEX_HTML).exists()

    score_dir = first_done.parent
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in score_dir.rglob("*") if p.is_file()}

    resumed = _sonar(sonar_cli, toy_env, "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in score_dir.rglob("*") if p.is_file()}
    assert after == before  # the finished evaluator was not touched

    _, fresh_errors = fresh.communicate(timeout=120)
    assert fresh.returncode == 0, fresh_errors
    resumed_files, fresh_files = _snapshot(run_dir), _snapshot(tmp_path / "fresh" / "r")
    assert sorted(resumed_files) == sorted(fresh_files)
    for rel in fresh_files:
        assert resumed_files[rel] == fresh_files[rel], rel

    events = [json.loads(line)["message"] for line in (run_dir / names.JOURNAL).read_text().splitlines()]
    assert events.count("starting run") == 1 and events.count("resuming run") == 1
    assert "skipping finished evaluator" in events
    assert events[-1] == "finished run"
    record = json.loads((run_dir / names.RUN_JSON).read_text())
    assert record["status"] == "success"
    assert [e.get("resumed", False) for e in record["result"]["executed_explainers"]] == [True, False, False]


def test_ctrl_c_exits_130_with_resume_hint(tmp_path, sonar_cli, toy_env):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    run_dir = tmp_path / "out" / "r"
    process = subprocess.Popen(
        [sonar_cli, "run", "--no-progress", "-d", str(dataset), *EVALUATORS, "-p", "toy_plugin", "--run-id", "r",
         "-o", str(tmp_path / "out")],
        env={**toy_env, "SONAR_TOY_SLEEP": "0.25"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    def second_evaluator_started() -> bool:
        # The journal says so only after the first evaluator counts as finished; its done marker
        # appears a moment earlier, and a SIGINT in between would find nothing finished yet.
        journal = run_dir / names.JOURNAL
        return journal.exists() and any(
            json.loads(line).get("message") == "queuing evaluator" and json.loads(line).get("evaluator") == "toy_slow"
            for line in journal.read_text().splitlines() if line.strip())

    deadline = time.time() + 60
    while time.time() < deadline and not second_evaluator_started():
        time.sleep(0.05)
    assert second_evaluator_started(), "the second evaluator never started"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr == (f"error: run interrupted; finished evaluators are kept: continue with "
                      f"`sonar run --resume {run_dir}`\n")
    events = [json.loads(line) for line in (run_dir / names.JOURNAL).read_text().splitlines()]
    assert events[-1]["message"] == "run interrupted" and events[-1]["finished"] == 1
    resumed = _sonar(sonar_cli, toy_env, "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert len(list(run_dir.glob(f"explainer_*/{names.DONE_MARKER}"))) == 3
