"""A Ray run killed with SIGKILL (or SIGTERM) pays once and leaves nothing running (issue 35).

``sonar run --executor ray`` asks a host on the test server, which answers its first calls and holds
the next ones: the killed run has those answers, and as many calls in flight as the host's
``max_concurrency`` allows. Once the driver's response cache holds the answers (before any chunk of
items could return, so they were stored as they arrived), the driver is killed. The
resumed run must ask the host only what the killed one had no answer for, and no process of the
killed run's Ray instance may outlive it.

The run's Ray instance is found here independently of Sonar's own reaper: the test gives the run
a fresh ``RAY_TMPDIR``, and a process belongs to the instance when that folder is in its command
line, its environment or the path of a file it has open (a worker's log).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

from judge_server import JudgeServer

pytest.importorskip("ray")

ITEMS = 40
#: Calls the server answers before it holds the rest.
ANSWERED = 6
#: The host's max_concurrency: the calls in flight when the run is killed, at most.
SLOTS = 2


def _cached_answers(path: Path) -> int:
    """How many answers the response cache file holds (read-only: the run's driver is writing it)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:  # not made yet
        return 0


def _ray_processes(root: str) -> list[str]:
    """The live processes that name ``root`` in their command line, environment or open files."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        base = f"/proc/{name}"
        try:
            stat = Path(f"{base}/stat").read_bytes()
            if stat[stat.rfind(b")") + 2:][:1] == b"Z":
                continue  # a zombie: nothing left running
            command = Path(f"{base}/cmdline").read_bytes()
            environment = Path(f"{base}/environ").read_bytes()
            descriptors = os.listdir(f"{base}/fd")
        except OSError:
            continue
        files = []
        for descriptor in descriptors:
            try:
                files.append(os.readlink(f"{base}/fd/{descriptor}"))
            except OSError:
                continue
        if root.encode() in command or root.encode() in environment or any(f.startswith(root) for f in files):
            found.append(f"{name}: {command[:100].decode(errors='replace')}")
    return found


def _gone(root: str, seconds: float) -> list[str]:
    """The instance's processes still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while (left := _ray_processes(root)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.fixture
def ray_tmpdir():
    # Short, under /tmp: Ray's Unix socket paths (under RAY_TMPDIR) must stay under 108 bytes.
    root = tempfile.mkdtemp(prefix="sonar-rk-", dir="/tmp")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_ray_run_pays_once_and_leaves_no_ray_process(tmp_path, sonar_cli, ray_tmpdir, stop):
    """SIGTERM ends a run on Ray at once, as it ends a local one (under ``ray.init``'s own handler,
    ``sys.exit``, it went on asking its host), and leaves the same state as SIGKILL."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"q{i:02d}", "input": f"Question number {i}?",
                                         "expected_output": f"answer {i}"}) + "\n" for i in range(ITEMS)),
                     encoding="utf-8")
    held = threading.Event()
    lock = threading.Lock()
    replied: list[str] = []
    holding: list[str] = []

    def reply(prompt: str) -> str:
        with lock:
            first = len(replied) < ANSWERED
            (replied if first else holding).append(prompt)
        if not first:
            held.wait(600)  # until the killed run is gone: the calls in flight at the kill
        return "answer " + prompt.split()[2].rstrip("?")

    cache = tmp_path / "cache.sqlite"
    config = tmp_path / "run.yaml"
    env = {**os.environ, "RAY_TMPDIR": ray_tmpdir}
    run_dir = tmp_path / "reports" / "r1"
    with JudgeServer(default=reply) as server:
        config.write_text(yaml.safe_dump({
            "name": "killed", "test_suite": str(suite), "output_dir": str(tmp_path / "reports"),
            "llm_cache": str(cache), "executor": "ray",
            "hosts": [{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                       "max_concurrency": SLOTS, "retries": 0, "timeout": 600}],
            "evaluators": ["factual_knowledge"]}), encoding="utf-8")
        try:
            errors = tmp_path / "stderr.txt"
            with errors.open("w") as stderr:
                process = subprocess.Popen([sonar_cli, "run", str(config), "--run-id", "r1", "--no-progress"],
                                           env=env, stdout=subprocess.DEVNULL, stderr=stderr)
            deadline = time.monotonic() + 300  # a Ray instance starts in 10-30 s on a busy 2-core machine
            while _cached_answers(cache) < ANSWERED and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert process.poll() is None, errors.read_text()
            assert _cached_answers(cache) == ANSWERED
            # No chunk of items has returned (each holds 16 items, and only 6 were answered): the answers
            # in the cache came one by one, as they arrived.
            journal = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
            assert not [e for e in journal if e["message"] == "asked shard"]
            process.send_signal(stop)
            assert process.wait(30) == -stop
            with lock:
                answered_before, in_flight = list(replied), list(holding)
            asked_before = [c.prompt for c in server.requests]
            assert len(answered_before) == ANSWERED and 1 <= len(in_flight) <= SLOTS
            assert sorted(asked_before) == sorted(answered_before + in_flight)

            # Every process of the killed run's Ray instance ends (the reaper), and its folder goes.
            assert _gone(ray_tmpdir, 60) == []
            assert os.listdir(ray_tmpdir) == []

            held.set()  # the held calls end (their callers are gone), and no call is held from now on
            server.reset()
            done = subprocess.run([sonar_cli, "run", "--resume", str(run_dir), "--no-progress"], env=env,
                                  capture_output=True, text=True, timeout=500)
            assert done.returncode == 0, done.stderr
            asked_again = [c.prompt for c in server.requests]
            # Nothing answered before the kill was asked again; what was re-asked is what was in flight.
            assert not set(asked_again) & set(answered_before)
            assert sorted(set(asked_again) & set(asked_before)) == sorted(in_flight)
            assert len(asked_again) == ITEMS - ANSWERED
            # A run that ends normally leaves no Ray process either: it waits for its reaper.
            assert _ray_processes(ray_tmpdir) == []
            assert os.listdir(ray_tmpdir) == []
        finally:
            held.set()

    rows = json.loads((run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [(r["test_case_key"], r["actual_output"]) for r in rows] == [(f"q{i:02d}", f"answer {i}")
                                                                       for i in range(ITEMS)]
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "success"
    # The resumed run read the killed run's answers from the cache and asked the host for the rest.
    assert record["pipeline"]["hosts"]["m"] == {"items": ITEMS, "answered": ITEMS, "fetched": ITEMS - ANSWERED,
                                                "cached": ANSWERED, "resumed": 0, "failed": 0}
