"""Two Ray nodes on one machine: a run through ``--ray-address`` writes the artifacts of a local run.

    python bench/ray_two_nodes.py [--evaluators text_matching,pii_leakage,...] [--keep DIR]

Starts a Ray head and a second worker node with ``ray start --block`` in two processes, each with
its own temporary folder and one CPU; runs ``sonar run`` once locally (while the nodes start) and once with
``--executor ray --ray-address 127.0.0.1:PORT`` (same configuration, same run id); compares the
two result folders with bench/compare_runs.py (everything but the journal, apart from timestamps
and durations); checks that every shard of every evaluator ran, and that the shards of an actor
pool ran on both nodes; stops both nodes (by their process, never with ``ray stop``, which would
stop every Ray on the machine). Exit 0 when all of this holds, 1 otherwise.
tests/core/test_ray_two_nodes.py runs it in CI.

Where the work lands: a pool's actors take one CPU each for their lifetime, and each node has one
CPU, so a pool of two actors has one on each node and its shards (shard ``i`` on actor ``i mod 2``)
run on both: Ray's resource accounting guarantees it. A row-wise evaluator's shards are tasks, which
go where Ray's scheduler puts them (its default policy fills a node before it spreads, and a worker
that ends a short shard takes the next one): they may all run on one node, so their spread is
printed, not checked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

#: Ray's token authentication: every node, probe and driver of this cluster shares one token.
ENV = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
#: Row-wise evaluators (tasks) and one on the embedding pool (two actors: one per node).
DEFAULT = ("text_matching,pii_leakage,sensitive_data_leakage,encoding_guardrail,factual_knowledge,"
           "answer_semantic_similarity")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(*args: str, temp: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--num-cpus=1",
               "--node-ip-address=127.0.0.1", "--disable-usage-stats", f"--temp-dir={temp}", *args]
    log = open(temp.parent / f"{temp.name}.log", "w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=ENV)


def _alive_nodes(address: str) -> int:
    probe = ("import ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); "
             "print(sum(1 for n in ray.nodes() if n['Alive']))" % address)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=ENV)
    try:
        return int(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0


def _stop(*processes: subprocess.Popen) -> None:
    """SIGTERM to every node at once (each in its own session: its processes go with it), then wait."""
    running = [p for p in processes if p.poll() is None]
    for process in running:
        os.killpg(process.pid, signal.SIGTERM)
    for process in running:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _start_sonar(config: Path, log: Path, *args: str) -> subprocess.Popen:
    """``sonar run`` in the background; its output goes to ``log`` (a pipe nobody reads could fill)."""
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "sonar_core.cli", "run", str(config), "--run-id", "two",
                                 "--no-progress", *args], stdout=out, stderr=subprocess.STDOUT, env=ENV)


def _finish_sonar(process: subprocess.Popen, log: Path) -> None:
    if process.wait() != 0:
        output = log.read_text(encoding="utf-8", errors="replace")
        raise SystemExit(f"sonar run failed ({process.returncode}): {output.strip()[-2000:]}")


def _sonar(config: Path, log: Path, *args: str) -> None:
    _finish_sonar(_start_sonar(config, log, *args), log)


def _placements(shards: list[dict], evaluators: list[str]) -> dict:
    """Per evaluator: its shards (all of them ran?) and the nodes they ran on; ``ok`` when every shard of
    every evaluator ran and the shards of each pool of two or more actors ran on two nodes (one actor
    per one-CPU node: guaranteed by Ray's resources). A task's node is Ray's choice: printed only."""
    lines, ok = [], True
    for name in evaluators:
        mine = [e for e in shards if e.get("evaluator") == name]
        if not mine:  # an evaluator that scores on the driver (requires_hosts) has no shard events
            lines.append(f"{name}: no shard on the cluster")
            continue
        total = mine[0]["shards"]
        ran = sorted({e["shard"] for e in mine})
        nodes = {e["node"].split("@")[0] for e in mine}
        actors = mine[0].get("actors", 0)
        complete = ran == list(range(1, total + 1))
        pooled = actors >= 2
        ok = ok and complete and (not pooled or len(nodes) == 2)
        where = f"{mine[0]['on']} ({actors} actors)" if actors else mine[0]["on"]
        check = "checked" if pooled else "Ray's choice, not checked"
        lines.append(f"{name}: {len(ran)} of {total} shards on {where}, on {len(nodes)} node(s) ({check})")
    return {"lines": lines, "ok": ok}


def main(argv: list[str] | None = None) -> int:
    # Here, not at the top: tests import _placements from this file, and tests/compare_runs.py has the same name.
    from compare_runs import compare

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluators", default=DEFAULT)
    parser.add_argument("--keep", type=Path, help="leave the run folders here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sonar-two-nodes-"))
    config = work / "run.yaml"  # batches of 8, shards of 16: several shards per evaluator
    config.write_text(json.dumps({"dataset": "demo", "batch_size": 8, "calibrate": False,
                                  "evaluators": args.evaluators.split(",")}), encoding="utf-8")
    port = _port()
    address = f"127.0.0.1:{port}"
    # The local run needs no cluster: it runs while the two nodes start (half of the bench's time
    # was these two, one after the other).
    started = time.perf_counter()
    local = _start_sonar(config, work / "local.log", "-o", str(work / "local"))
    head = _ray("--head", f"--port={port}", "--include-dashboard=false", temp=work / "head")
    worker = None
    try:
        deadline = time.time() + 180
        while _alive_nodes(address) < 1:
            if time.time() > deadline or head.poll() is not None:
                print("the head node did not start", file=sys.stderr)
                return 1
            time.sleep(0.5)
        worker = _ray(f"--address={address}", temp=work / "worker")
        while _alive_nodes(address) < 2:
            if time.time() > deadline or worker.poll() is not None:
                print("the second node did not join", file=sys.stderr)
                return 1
            time.sleep(0.5)
        _finish_sonar(local, work / "local.log")
        local_seconds = time.perf_counter() - started
        started = time.perf_counter()
        _sonar(config, work / "ray.log", "-o", str(work / "ray"), "--executor", "ray", "--ray-address", address,
               "--ray-shard-rows", "16")
        ray_seconds = time.perf_counter() - started
        report = compare(work / "local" / "two", work / "ray" / "two",
                         aliases=[(str(work / "local"), str(work / "ray"))])
        report.pop("journal.jsonl", None)  # the journal says where things ran: it differs by design
        journal = [json.loads(line) for line in (work / "ray" / "two" / "journal.jsonl").read_text().splitlines()]
        shards = [e for e in journal if e.get("executor") == "ray" and "node" in e]
        nodes = {e["node"].split("@")[0] for e in shards}
        started_event = next(e for e in journal if e["message"] == "started executor")
        print(f"cluster: {started_event['nodes']} nodes, resources {started_event['resources']}")
        print(f"shards ran on {len(nodes)} node(s); local {local_seconds:.1f} s (alongside the nodes' start), "
              f"ray {ray_seconds:.1f} s (end to end, including the driver's start)")
        placed = _placements(shards, args.evaluators.split(","))
        for line in placed["lines"]:
            print(line)
        for name, lines in report.items():
            print(f"DIFFERS {name}: {lines[:3]}")
        if args.keep:
            shutil.copytree(work / "local", args.keep / "local", dirs_exist_ok=True)
            shutil.copytree(work / "ray", args.keep / "ray", dirs_exist_ok=True)
        ok = not report and started_event["nodes"] == 2 and placed["ok"]
        print("identical artifacts on two nodes" if ok else "FAILED")
        return 0 if ok else 1
    finally:
        if local.poll() is None:  # the cluster did not start: the local run is of no use
            local.kill()
            local.wait()
        _stop(*(p for p in (worker, head) if p is not None))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
