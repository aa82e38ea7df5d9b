"""A pipeline run killed with SIGKILL while the host answers, then resumed: only the rest is asked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import yaml

from judge_server import JudgeServer

N = 24


def test_resume_after_kill_9_asks_the_host_only_for_the_missing_items(tmp_path, sonar_cli):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"q{i:02d}", "input": f"Question number {i}?",
                                         "expected_output": f"answer {i}"}) + "\n" for i in range(N)),
                     encoding="utf-8")
    with JudgeServer(default=lambda prompt: "answer " + prompt.split()[2].rstrip("?"), latency=0.1) as server:
        config = tmp_path / "run.yaml"
        # No response cache: the answers file alone must tell the resumed run what was answered.
        config.write_text(yaml.safe_dump({
            "name": "killed", "test_suite": str(suite), "output_dir": str(tmp_path / "reports"), "no_cache": True,
            "hosts": [{"key": "slow", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                       "max_concurrency": 1, "retries": 0}],
            "evaluators": ["factual_knowledge"]}), encoding="utf-8")
        run_dir = tmp_path / "reports" / "r1"
        answers = run_dir / "dataset" / "answers.jsonl"
        process = subprocess.Popen([sonar_cli, "run", str(config), "--run-id", "r1", "--no-progress"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        # Items are persisted 8 at a time (max_concurrency 1 x 8): kill once the first batch is on disk.
        while time.monotonic() < deadline:
            if answers.is_file() and len(answers.read_text(encoding="utf-8").splitlines()) >= 8:
                break
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL
        kept = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
        answered_before = {r["test_case_key"] for r in kept}
        assert 8 <= len(answered_before) < N
        server.reset()
        server.latency = 0.0  # slow answers let the kill land mid-run; the resumed run needs none

        done = subprocess.run([sonar_cli, "run", "--resume", str(run_dir), "--no-progress"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        missing = {f"Question number {i}?" for i in range(N) if f"q{i:02d}" not in answered_before}
        # The resumed run asked exactly the items the killed one had not persisted, each once.
        assert server.calls == N - len(answered_before)
        assert sorted(server.answered) == sorted(missing)

    rows = json.loads((run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["test_case_key"] for r in rows] == [f"q{i:02d}" for i in range(N)]
    assert all(r["actual_output"] == f"answer {int(r['test_case_key'][1:])}" for r in rows)
    events = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    resumed = [e for e in events if e["message"] == "using resumed sut responses"]
    assert [(e["model_key"], e["items"]) for e in resumed] == [("slow", len(answered_before))]
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "success"
    assert record["pipeline"]["hosts"]["slow"] == {"items": N, "answered": N, "fetched": N - len(answered_before),
                                                   "cached": 0, "resumed": len(answered_before), "failed": 0}
    # Every test case was scored: factual knowledge is 1 for each answer.
    assert record["result"]["problems"] == []
