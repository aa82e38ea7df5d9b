"""The local Ray instance a run starts, tied to the run's life: no Ray process outlives the driver.

``ray.shutdown()`` stops every process of the instance when a run ends normally, fails, or is
interrupted (Ctrl-C; SIGTERM, which ``ray.init`` turns into ``SystemExit``). A driver killed with
SIGKILL runs no code: Ray's own fate sharing (``PR_SET_PDEATHSIG``) ends the GCS, the raylet and
the monitors, but the raylet's children outlived it (Ray 2.48: idle workers for a few seconds, the
dashboard agent and the runtime-env agent for good: still running minutes later, and deaf to
SIGTERM).

So before it starts the instance the driver starts a *reaper* (:class:`LocalCluster`): this file
run as a process of its own, in a session of its own (a terminal's Ctrl-C does not reach it),
holding the read end of a pipe whose write end only the driver holds (not inherited by anything
it starts). However the driver ends, the pipe closes; the reaper then ends every process of the
instance, SIGTERM first and SIGKILL after :data:`GRACE_SECONDS`, removes the instance's temp folder
and exits. After a normal end the driver closes the pipe itself and waits for the reaper, which
then finds nothing left but the folder.

*Which processes*: those whose command line names the instance's temp folder (GCS, raylet,
agents, monitors: Ray passes them the session folder), and those whose environment has
``SONAR_RAY_TEMP=<folder>`` (workers, whose command line Ray replaces with a title such as
``ray::IDLE``). The driver sets that variable only while ``ray.init`` starts the instance, so every
process of the instance inherits it (workers from the raylet) and no other process does. A cluster
the run joins (``ray_address``, ``RAY_ADDRESS``) is not the run's: it gets no reaper.

Run as the reaper (``python -I -S ray_reaper.py FOLDER``), this file imports the standard library only.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Iterator

__all__ = ["LocalCluster", "MARK", "members", "sweep"]

#: The environment variable that marks the processes of one run's Ray instance (its value: the temp folder).
MARK = "SONAR_RAY_TEMP"
#: Seconds a process gets between SIGTERM and SIGKILL.
GRACE_SECONDS = 2.0
#: Seconds the reaper goes on ending processes of the instance (new ones may start while it does).
SWEEP_SECONDS = 30.0
#: Seconds the driver waits for its reaper after a normal end.
WAIT_SECONDS = SWEEP_SECONDS + 10.0


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:  # gone, or not ours to read
        return b""


def _is_member(pid: int, folder: str) -> bool:
    stat = _read(f"/proc/{pid}/stat")
    if not stat or stat[stat.rfind(b")") + 2:][:1] == b"Z":  # gone, or a zombie (nothing left to end)
        return False
    if folder.encode() in _read(f"/proc/{pid}/cmdline"):
        return True
    return f"{MARK}={folder}".encode() in _read(f"/proc/{pid}/environ").split(b"\0")


def members(folder: str, exclude: frozenset[int] = frozenset()) -> list[int]:
    """The live processes of the Ray instance in ``folder`` (none where there is no ``/proc``)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [int(name) for name in names if name.isdigit() and int(name) not in exclude
            and _is_member(int(name), folder)]


def _signal(pid: int, folder: str, number: int) -> None:
    """Send ``number`` to ``pid`` if it is still a member: through a pidfd where the system has them, so a
    pid reused by another process between the scan and the signal is never hit."""
    try:
        if hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal"):
            descriptor = os.pidfd_open(pid)
            try:
                if _is_member(pid, folder):  # checked after the pidfd pinned the process
                    signal.pidfd_send_signal(descriptor, number)
            finally:
                os.close(descriptor)
        elif _is_member(pid, folder):
            os.kill(pid, number)
    except OSError:  # gone meanwhile
        pass


def sweep(folder: str, grace: float = GRACE_SECONDS, limit: float = SWEEP_SECONDS) -> list[int]:
    """End every process of the instance in ``folder``; returns those still alive after ``limit`` seconds."""
    me = frozenset({os.getpid()})
    deadline = time.monotonic() + limit
    asked: dict[int, float] = {}
    while True:
        alive = members(folder, me)
        if not alive or time.monotonic() > deadline:
            return alive
        now = time.monotonic()
        for pid in alive:
            if pid not in asked:
                asked[pid] = now
                _signal(pid, folder, signal.SIGTERM)
            elif now - asked[pid] > grace:
                _signal(pid, folder, signal.SIGKILL)
        time.sleep(0.1)


def _temp_root() -> str | None:
    """Where the instance's folder goes: ``RAY_TMPDIR`` as Ray's own, else ``/tmp`` (Ray's Unix socket
    paths must stay under 108 bytes, which a long ``TMPDIR`` would break), else the system's."""
    for root in (os.environ.get("RAY_TMPDIR"), "/tmp"):
        if root and os.path.isdir(root):
            return root
    return None


class LocalCluster:
    """The temp folder of one run's own Ray instance and its reaper (see the module docstring)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="sonar-ray-", dir=_temp_root())
        read, self._write = os.pipe()  # neither end is inherited by what the driver starts later
        try:
            self.reaper = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), self.folder],
                                           stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True)
        except OSError:
            os.close(self._write)
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        finally:
            os.close(read)

    @contextmanager
    def marking(self) -> Iterator[None]:
        """While the instance starts: every process it starts inherits the mark."""
        os.environ[MARK] = self.folder
        try:
            yield
        finally:
            os.environ.pop(MARK, None)

    def close(self, wait: float = WAIT_SECONDS) -> None:
        """After ``ray.shutdown()``: the reaper ends what is left of the instance and removes its folder."""
        if self._write is not None:
            os.close(self._write)
            self._write = None
        try:
            self.reaper.wait(wait)
        except subprocess.TimeoutExpired:  # it goes on alone; the run need not wait longer
            pass
        shutil.rmtree(self.folder, ignore_errors=True)


def _wait_for_driver(parent: int) -> None:
    """Until the pipe's write end is closed, or the driver is gone while something it forked still holds it."""
    while True:
        ready, _, _ = select.select([0], [], [], 1.0)
        if ready and not os.read(0, 4096):
            return
        if os.getppid() != parent:
            return


def main(argv: list[str]) -> int:
    folder = argv[1]
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    _wait_for_driver(os.getppid())
    left = sweep(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
