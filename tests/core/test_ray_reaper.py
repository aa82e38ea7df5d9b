"""The reaper of a run's own Ray instance (sonar_core/execution/ray_reaper.py), without Ray.

Stand-in processes play the instance: one names its folder on its command line (as the raylet and
the agents do), one carries the mark in its environment only (as a worker whose command line is
``ray::IDLE``), one ignores SIGTERM (as the agents did), and one unrelated process must be left alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sonar_core.execution import ray_reaper
from sonar_core.execution.ray_reaper import MARK, LocalCluster, members, sweep

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

#: A process that sleeps, ignoring SIGTERM when its first argument says so.
SLEEPER = "import signal, sys, time\nif sys.argv[1] == 'deaf': signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(120)"


def _sleeper(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SLEEPER, *args], env={**os.environ, **(env or {})})


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


def _wait_gone(pids: list[int], seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def test_sweep_ends_the_instances_processes_and_leaves_the_others(tmp_path):
    folder = str(tmp_path / "sonar-ray-x")
    named = _sleeper("plain", folder)
    marked = _sleeper("plain", env={MARK: folder})
    deaf = _sleeper("deaf", env={MARK: folder})
    other = _sleeper("plain", env={MARK: folder + "-other"})
    try:
        time.sleep(0.5)  # the deaf one has set its handler
        assert sorted(members(folder)) == sorted([named.pid, marked.pid, deaf.pid])
        assert sweep(folder, grace=0.5, limit=20) == []
        for process in (named, marked, deaf):
            process.wait(10)
        assert (named.returncode, marked.returncode, deaf.returncode) == (-signal.SIGTERM, -signal.SIGTERM,
                                                                         -signal.SIGKILL)
        assert other.poll() is None  # another instance's process is not touched
    finally:
        for process in (named, marked, deaf, other):
            if process.poll() is None:
                process.kill()
                process.wait()


#: A driver that starts its reaper, then an "instance" (a marked process, as ray.init would under
#: ``marking()``), prints its folder and the instance's pid, and then waits to be killed.
DRIVER = textwrap.dedent("""
    import subprocess, sys, time
    sys.path.insert(0, sys.argv[1])
    from ray_reaper import LocalCluster  # the module alone: it imports the standard library only
    cluster = LocalCluster()
    with cluster.marking():
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(cluster.folder, worker.pid, cluster.reaper.pid, flush=True)
    time.sleep(120)
""")


def test_a_killed_driver_leaves_neither_its_instance_nor_its_folder_nor_its_reaper():
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(Path(ray_reaper.__file__).parent)],
                              stdout=subprocess.PIPE, text=True)
    try:
        folder, worker, reaper = driver.stdout.readline().split()
        assert Path(folder).is_dir() and _alive(int(worker)) and _alive(int(reaper))
        assert os.environ.get(MARK) is None
        driver.kill()
        driver.wait(10)
        assert _wait_gone([int(worker), int(reaper)]) == []
        assert not Path(folder).exists()
    finally:
        if driver.poll() is None:
            driver.kill()
        driver.stdout.close()


def test_a_normal_close_waits_for_the_reaper_and_removes_the_folder():
    cluster = LocalCluster()
    with cluster.marking():
        assert os.environ[MARK] == cluster.folder
        worker = _sleeper("plain")  # what ray.shutdown() would have left
    assert MARK not in os.environ
    cluster.close()
    assert cluster.reaper.returncode == 0  # it ended every process it found
    assert worker.wait(10) == -signal.SIGTERM
    assert not Path(cluster.folder).exists()
