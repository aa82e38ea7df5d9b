"""How much a killed run pays twice, and what it leaves running: kill -9 mid-pipeline, then --resume.

    python bench/ray_kill.py [--executor ray|local] [--items 200] [--answered 71] [--concurrency 8]
                             [--latency 0.2] [--signal KILL|TERM|INT] [--sonar PATH]

Serves a scripted chat model (tests/judge_server.py, in this process) that answers every call after
``--latency`` seconds; runs ``sonar run`` (``--sonar``: another installation's console script, to
measure an older version) asking it ``--items`` test cases (default shards: chunks of
``--concurrency`` x 8 items); kills the run with SIGKILL (``--signal``: or SIGTERM, SIGINT) once
the server has sent ``--answered`` answers, and says how long the run took to end; resumes it (same
executor) and counts, from the server's own log:

- *in flight*: calls the killed run had made and not got an answer to;
- *re-asked*: calls the resumed run made that the killed run had made too;
- *paid twice*: answers the killed run had received and the resumed run asked for again.

With ``--executor ray`` it also says how long after the kill the last process of the killed run's
Ray instance ended (after the run ended; found by the run's own ``RAY_TMPDIR`` in a process's command line, environment or
open files); processes still alive after 60 s are listed and then killed, by their pid.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from judge_server import JudgeServer  # noqa: E402


def ray_processes(root: str) -> list[int]:
    """Live processes naming ``root`` in their command line, environment or open files."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        base = f"/proc/{name}"
        try:
            stat = Path(f"{base}/stat").read_bytes()
            if stat[stat.rfind(b")") + 2:][:1] == b"Z":
                continue
            text = Path(f"{base}/cmdline").read_bytes() + Path(f"{base}/environ").read_bytes()
            links = []
            for descriptor in os.listdir(f"{base}/fd"):
                try:
                    links.append(os.readlink(f"{base}/fd/{descriptor}"))
                except OSError:
                    continue
        except OSError:
            continue
        if root.encode() in text or any(link.startswith(root) for link in links):
            found.append(int(name))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executor", choices=("ray", "local"), default="ray")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--answered", type=int, default=71)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--signal", choices=("KILL", "TERM", "INT"), default="KILL")
    parser.add_argument("--sonar", default=str(Path(sys.executable).parent / "sonar"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sonar-kill-"))
    root = tempfile.mkdtemp(prefix="sonar-rk-", dir="/tmp")  # short: Ray's socket paths stay under 108 bytes
    lock = threading.Lock()
    replied: list[str] = []

    def reply(prompt: str) -> str:
        with lock:
            replied.append(prompt)
        return "answer " + prompt.split()[2].rstrip("?")

    suite = work / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"q{i:04d}", "input": f"Question number {i}?",
                                         "expected_output": f"answer {i}"}) + "\n" for i in range(args.items)),
                     encoding="utf-8")
    env = {**os.environ, "RAY_TMPDIR": root}
    run_dir = work / "reports" / "r1"
    try:
        with JudgeServer(default=reply, latency=args.latency) as server:
            config = work / "run.json"
            config.write_text(json.dumps({
                "name": "killed", "test_suite": str(suite), "output_dir": str(work / "reports"),
                "llm_cache": str(work / "cache.sqlite"), "executor": args.executor,
                "hosts": [{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                           "max_concurrency": args.concurrency, "retries": 0}],
                "evaluators": ["factual_knowledge"]}), encoding="utf-8")
            process = subprocess.Popen([args.sonar, "run", str(config), "--run-id", "r1", "--no-progress"], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while len(replied) < args.answered and process.poll() is None:
                time.sleep(0.005)
            with lock:  # no answer goes out between the count and the signal
                answered = set(replied)
                process.send_signal(getattr(signal, f"SIG{args.signal}"))
            signalled = time.monotonic()
            process.wait()
            killed = time.monotonic()
            asked = {c.prompt for c in server.requests}
            left = []
            if args.executor == "ray":
                while (left := ray_processes(root)) and time.monotonic() - killed < 60:
                    time.sleep(0.1)
                gone = time.monotonic() - killed
            time.sleep(args.latency * 2)  # the answers still on their way to the dead run
            server.reset()
            done = subprocess.run([args.sonar, "run", "--resume", str(run_dir), "--no-progress"], env=env,
                                  capture_output=True, text=True)
            again = [c.prompt for c in server.requests]
        print(f"executor {args.executor}, {args.items} items, max_concurrency {args.concurrency}, "
              f"latency {args.latency} s, sonar {args.sonar}")
        print(f"SIG{args.signal} after {len(answered)} answers, {len(asked - answered)} calls in flight; the run "
              f"ended {killed - signalled:.1f} s later (exit {process.returncode}) having made {len(asked)} calls")
        print(f"resumed (exit {done.returncode}): {len(again)} calls, {len(set(again) & asked)} re-asked, "
              f"{len(set(again) & answered)} paid twice")
        if args.executor == "ray":
            if left:
                print(f"{len(left)} Ray processes still alive 60 s after the run ended: {left} (killed now)")
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:  # ended meanwhile
                        pass
            else:
                print(f"no Ray process left {gone:.1f} s after the run ended")
        return 0 if done.returncode == 0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
