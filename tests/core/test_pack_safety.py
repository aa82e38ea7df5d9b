"""Opening an evidence pack (issue 35): only the members pack.json lists, each of its declared size and
SHA-256, within ``--max-size``; a pack refused for any reason leaves nothing behind.

The packs here are made by hand (a pack.json of this Sonar's schema and version, members chosen to be
hostile): each is refused before the replay runs anything. ``_write_member`` is watched to prove that a
refusal of steps 1-3 (sonar_core/pack_archive.py) comes before any member is written.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names, pack_archive
from sonar_core.cli import cli
from sonar_core.version import __version__

VALID = ("inputs/dataset.json", b'[{"test_case_key": "t", "model_key": "m", "input": "q", "actual_output": "a"}]')


def _pack(path: Path, members: dict[str, bytes], listed: dict[str, bytes] | None = None,
          sizes: dict[str, int] | None = None) -> Path:
    """A zip of ``members`` whose pack.json lists ``listed`` (default: every member) with their true
    SHA-256 and size (``sizes`` overrides a size)."""
    listed = members if listed is None else listed
    manifest = {"schema_version": names.PACK_SCHEMA_VERSION, "sonar_version": __version__, "run_id": "r",
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in listed.items()},
                "sizes": {name: len(data) for name, data in listed.items()} | (sizes or {})}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(names.PACK_MANIFEST, json.dumps(manifest))
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.fixture
def writes(monkeypatch):
    """The members the replay began to write, in order."""
    seen: list[str] = []
    real = pack_archive._write_member

    def watched(pack, archive, info, target, digest, size):
        seen.append(info.filename)
        return real(pack, archive, info, target, digest, size)

    monkeypatch.setattr(pack_archive, "_write_member", watched)
    return seen


def _replay(pack: Path, out: Path, *args: str):
    return CliRunner().invoke(cli, ["replay", str(pack), "-o", str(out), *args])


def test_an_unlisted_member_is_refused_before_anything_is_written(tmp_path, writes):
    """issue 35's bomb: 64 MiB of zeros (64 KiB compressed) that pack.json does not list."""
    bomb = b"\0" * (64 << 20)
    pack = _pack(tmp_path / "bomb.zip", {VALID[0]: VALID[1], "inputs/bomb.bin": bomb}, listed={VALID[0]: VALID[1]})
    assert pack.stat().st_size < 1 << 20
    outcome = _replay(pack, tmp_path / "out" / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == f"error: {pack}: member 'inputs/bomb.bin' is not listed in pack.json; refusing the pack\n"
    assert writes == [] and not (tmp_path / "out").exists()  # the folders the replay made are gone too


def test_a_member_larger_than_pack_json_says_is_refused_before_anything_is_written(tmp_path, writes):
    big = b"x" * 5000
    pack = _pack(tmp_path / "big.zip", {VALID[0]: VALID[1], "run/big.txt": big}, sizes={"run/big.txt": 100})
    outcome = _replay(pack, tmp_path / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == (f"error: {pack}: member 'run/big.txt' holds 5000 bytes, pack.json gives it 100; "
                              "refusing the pack\n")
    assert writes == [] and not (tmp_path / "replay").exists()


def test_a_member_streams_no_further_than_its_declared_size(tmp_path):
    """Should a zip's own header understate a member, its bytes stop one past the size pack.json gives."""
    data = b"y" * (3 << 20)
    pack = _pack(tmp_path / "p.zip", {"run/a.bin": data})
    target = tmp_path / "a.bin"
    with zipfile.ZipFile(pack) as archive:
        info = archive.getinfo("run/a.bin")
        declared = (3 << 20) // 2  # one and a half blocks of 1 MiB
        with pytest.raises(pack_archive.PackError, match=f"holds more than the {declared} bytes pack.json gives it"):
            pack_archive._write_member(pack, archive, info, target, hashlib.sha256(data).hexdigest(), declared)
    # The first block was written; the second, read one byte past the declared size, was not (the caller
    # then removes the file).
    assert target.stat().st_size == 1 << 20


def test_a_traversal_member_is_refused_before_anything_is_written(tmp_path, writes):
    pack = _pack(tmp_path / "evil.zip", {VALID[0]: VALID[1], "inputs/../../evil.txt": b"pwned"})
    outcome = _replay(pack, tmp_path / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == ("error: pack member 'inputs/../../evil.txt' would be written outside the output folder; "
                              "refusing the pack\n")
    assert writes == [] and not (tmp_path / "replay").exists() and not (tmp_path / "evil.txt").exists()


def test_members_past_the_size_limit_are_refused_before_anything_is_written(tmp_path, writes):
    pack = _pack(tmp_path / "p.zip", {VALID[0]: VALID[1], "run/r/a.txt": b"z" * 2000})
    outcome = _replay(pack, tmp_path / "replay", "--max-size", "1KB")
    assert outcome.exit_code == 3
    total = len(VALID[1]) + 2000
    assert outcome.stderr == (f"error: {pack}: its members hold {total} bytes unpacked, more than the limit of 1000 "
                              "(--max-size); refusing the pack\n")
    assert writes == [] and not (tmp_path / "replay").exists()
    assert _replay(pack, tmp_path / "r2", "--max-size", "a lot").exit_code == 2


def test_a_damaged_member_leaves_nothing_behind(tmp_path, writes):
    """Its SHA-256 is found wrong only once it is written: the replay folder goes, .pack with it, but an
    empty folder the user made stays (empty)."""
    pack = _pack(tmp_path / "p.zip", {VALID[0]: VALID[1], "run/r/a.txt": b"real"},
                 listed={VALID[0]: VALID[1], "run/r/a.txt": b"fake"})
    outcome = _replay(pack, tmp_path / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == (f"error: {pack}: member 'run/r/a.txt' is missing or damaged (its SHA-256 differs from "
                              "pack.json's)\n")
    assert writes == [VALID[0], "run/r/a.txt"] and not (tmp_path / "replay").exists()
    (tmp_path / "mine").mkdir()
    assert _replay(pack, tmp_path / "mine").exit_code == 3
    assert list((tmp_path / "mine").iterdir()) == []


def test_a_member_twice_and_a_listed_member_missing_are_refused(tmp_path, writes):
    twice = tmp_path / "twice.zip"
    _pack(twice, {VALID[0]: VALID[1]})
    with zipfile.ZipFile(twice, "a") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr(VALID[0], b"[]")
    outcome = _replay(twice, tmp_path / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == f"error: {twice}: member '{VALID[0]}' appears twice; refusing the pack\n"
    missing = _pack(tmp_path / "missing.zip", {}, listed={VALID[0]: VALID[1]})
    outcome = _replay(missing, tmp_path / "replay")
    assert outcome.exit_code == 3
    assert outcome.stderr == (f"error: {missing}: member '{VALID[0]}' is missing or damaged (its SHA-256 differs "
                              "from pack.json's)\n")
    assert writes == [] and not (tmp_path / "replay").exists()
