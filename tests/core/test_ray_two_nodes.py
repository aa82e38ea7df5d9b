"""Two Ray nodes on one machine (issue 21): bench/ray_two_nodes.py starts a head and a second worker
node with ``ray start`` (separate processes, separate temporary folders), drives a run through
``--ray-address`` and compares its artifacts with a local run's. CI runs it here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
SCRIPT = Path(__file__).parent.parent.parent / "bench" / "ray_two_nodes.py"


def test_a_run_through_ray_address_on_two_nodes_writes_the_local_artifacts():
    done = subprocess.run([sys.executable, str(SCRIPT), "--evaluators", "text_matching,pii_leakage"],
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("cluster: 2 nodes, resources {'CPU': 2.0")
    assert lines[1].startswith("shards ran on 2 node(s)")
    assert lines[-1] == "identical artifacts on two nodes"
