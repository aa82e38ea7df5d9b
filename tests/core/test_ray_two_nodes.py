"""Two Ray nodes on one machine (issue 21): bench/ray_two_nodes.py starts a head and a second worker
node with ``ray start`` (separate processes, separate temporary folders, one CPU each), drives a run
through ``--ray-address`` and compares its artifacts with a local run's. CI runs it here.

What it proves: every shard of every evaluator ran on the cluster, the artifacts equal a one-node
(local) run's, and work ran on both nodes. The last is checked where Ray guarantees it: the
embedding pool has two actors of one CPU each (``ray_model_actors`` auto: the cluster's 2 CPUs), and
each node has one CPU, so one actor is on each node and shard ``i`` goes to actor ``i mod 2``. Where a
row-wise evaluator's shards run (Ray tasks) is Ray's scheduler's choice: its default policy fills a
node before it spreads, and a worker that ends a short shard takes the next one, so all of them ran
on one node once (a flaky failure). The bench prints their nodes; it does not check them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
SCRIPT = Path(__file__).parent.parent.parent / "bench" / "ray_two_nodes.py"


def test_a_run_through_ray_address_on_two_nodes_writes_the_local_artifacts():
    done = subprocess.run([sys.executable, str(SCRIPT), "--evaluators",
                           "text_matching,pii_leakage,answer_semantic_similarity"],
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("cluster: 2 nodes, resources {'CPU': 2.0")
    # The demo's 54 rows in shards of 16 (--ray-shard-rows 16, batches of 8): 4 shards, all of them ran.
    assert re.fullmatch(r"text_matching: 4 of 4 shards on tasks, on [12] node\(s\) \(Ray's choice, not checked\)",
                        lines[2]), lines
    assert re.fullmatch(r"pii_leakage: (\d+) of \1 shards on tasks, on [12] node\(s\) \(Ray's choice, not checked\)",
                        lines[3]), lines
    # Two one-CPU actors on two one-CPU nodes: one on each, so the shards ran on both.
    assert re.fullmatch(r"answer_semantic_similarity: (\d+) of \1 shards on embedding actors \(2 actors\), "
                        r"on 2 node\(s\) \(checked\)", lines[4]), lines
    assert lines[-1] == "identical artifacts on two nodes"


def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ray_two_nodes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path  # the bench puts bench/ first: its compare_runs.py is not tests/compare_runs.py
    return module


def _shard(evaluator, number, shards, node, on="tasks", actors=None):
    return {"evaluator": evaluator, "shard": number, "shards": shards, "node": f"{node}@host", "on": on,
            **({"actors": actors} if actors else {})}


def test_the_bench_fails_a_pool_on_one_node_or_a_missing_shard_and_passes_tasks_on_one_node():
    placements = _bench()._placements
    tasks_on_one = [_shard("text_matching", 1, 2, "aa"), _shard("text_matching", 2, 2, "aa")]
    pool_on_two = [_shard("semantic", i, 3, "aa" if i % 2 else "bb", "embedding actors", 2) for i in (1, 2, 3)]
    good = placements(tasks_on_one + pool_on_two, ["text_matching", "semantic"])
    assert good == {"ok": True, "lines": [
        "text_matching: 2 of 2 shards on tasks, on 1 node(s) (Ray's choice, not checked)",
        "semantic: 3 of 3 shards on embedding actors (2 actors), on 2 node(s) (checked)"]}
    pool_on_one = [_shard("semantic", i, 3, "aa", "embedding actors", 2) for i in (1, 2, 3)]
    bad = placements(tasks_on_one + pool_on_one, ["text_matching", "semantic"])
    assert bad["ok"] is False
    assert bad["lines"][1] == "semantic: 3 of 3 shards on embedding actors (2 actors), on 1 node(s) (checked)"
    missing = placements(tasks_on_one[:1] + pool_on_two, ["text_matching", "semantic"])
    assert missing["ok"] is False
    assert missing["lines"][0] == "text_matching: 1 of 2 shards on tasks, on 1 node(s) (Ray's choice, not checked)"
