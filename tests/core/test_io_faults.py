"""I/O faults (issue 25, item 3): a write that fails at a random artifact ends the run with one line
naming the file (exit 6), and ``--resume`` completes the run to the same artifacts as an uninterrupted one."""

from __future__ import annotations

import builtins
import errno
import io
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

ROWS = [{"test_case_key": f"t{i}", "model_key": m, "input": f"Capital {i}?", "expected_output": "Paris",
         "actual_output": "Paris" if (i + len(m)) % 2 else "Rome"} for i in range(6) for m in ("m1", "m2")]
_real_open = io.open


class DiskFull:
    """Counts the files opened for writing under ``root``; the ``fail_at``-th fails with ENOSPC."""

    def __init__(self, root: Path, fail_at: int) -> None:
        self.root, self.fail_at, self.writes, self.failed = str(root), fail_at, 0, None

    def open(self, file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax") and str(file).startswith(self.root):
            self.writes += 1
            if self.writes == self.fail_at:
                self.failed = str(file)
                raise OSError(errno.ENOSPC, "No space left on device", str(file))
        return _real_open(file, mode, *args, **kwargs)


def _run(monkeypatch, dataset: Path, out: Path, faults: DiskFull | None = None, *extra: str):
    args = ["run", "--no-progress", *extra] if extra else [
        "run", "--no-progress", "-d", str(dataset), "-e", "factual_knowledge", "-e", "looping_detection",
        "--run-id", "r", "-o", str(out)]
    with monkeypatch.context() as patch:
        if faults is not None:  # pathlib opens through io.open, the rest through builtins.open
            patch.setattr(io, "open", faults.open)
            patch.setattr(builtins, "open", faults.open)
        return CliRunner().invoke(cli, args, catch_exceptions=False)


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run but those holding wall-clock times (as tests/core/test_resume.py compares)."""
    files = {}
    for path in sorted(run_dir.rglob("*")):
        rel = str(path.relative_to(run_dir))
        if not path.is_file() or rel in (names.RUN_JSON, names.JOURNAL) or f"/{names.LOG_DIR}/" in f"/{rel}":
            continue
        data = path.read_bytes()
        if rel == names.INDEX_HTML:
            data = data.replace(json.loads((run_dir / names.RUN_JSON).read_text())["created"].encode(), b"<created>")
        files[rel] = data
    return files


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("io") / "d.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def uninterrupted(dataset, tmp_path_factory) -> tuple[dict[str, bytes], int]:
    """The uninterrupted run's files, and how many files it opened for writing."""
    out = tmp_path_factory.mktemp("clean")
    counter = DiskFull(out, fail_at=0)
    monkeypatch = pytest.MonkeyPatch()
    try:
        result = _run(monkeypatch, dataset, out, counter)
    finally:
        monkeypatch.undo()
    assert result.exit_code == 0, result.stderr
    return _snapshot(out / "r"), counter.writes


# Writes 1 and 2 are the journal and the first run.json (see the next test); a fixed seed picks the rest.
@pytest.mark.parametrize("pick", range(4))
def test_a_write_error_at_a_random_artifact_names_the_file_and_resume_completes_the_run(
        monkeypatch, tmp_path, dataset, uninterrupted, pick):
    files, writes = uninterrupted
    fail_at = random.Random(25 + pick).randint(3, writes)
    faults = DiskFull(tmp_path, fail_at)
    result = _run(monkeypatch, dataset, tmp_path, faults)
    assert faults.failed is not None and result.exit_code == 6
    assert result.stderr.splitlines() == [f"error: {faults.failed.removesuffix('.tmp')}: No space left on device; "
                                          f"finished evaluators are kept (continue with --resume once it can be "
                                          f"written)"]
    resumed = _run(monkeypatch, dataset, tmp_path, None, "--resume", str(tmp_path / "r"))
    assert resumed.exit_code == 0, resumed.stderr
    assert _snapshot(tmp_path / "r") == files


@pytest.mark.parametrize("fail_at, file", [(1, names.JOURNAL), (2, names.RUN_JSON)])
def test_a_write_error_before_the_runs_record_leaves_nothing_and_the_same_command_runs_again(
        monkeypatch, tmp_path, dataset, uninterrupted, fail_at, file):
    result = _run(monkeypatch, dataset, tmp_path, DiskFull(tmp_path, fail_at))
    assert (result.exit_code, result.stderr) == (6, f"error: {tmp_path / 'r' / file}: No space left on device; "
                                                    f"nothing was kept (run it again once it can be written)\n")
    assert not (tmp_path / "r").exists()
    again = _run(monkeypatch, dataset, tmp_path)
    assert again.exit_code == 0, again.stderr
    assert _snapshot(tmp_path / "r") == uninterrupted[0]
