"""``sonar pack`` and ``sonar replay``: an evidence pack of a quickstart-like run, replayed with the judge
server stopped and SONAR_HOME pointing at an empty folder, rebuilds every artifact.

The run is the quickstart's dataset (the bundled demo) through a subset of its evaluators, to stay
fast: text matching, PII leakage, BLEU and classification (no model), one judge evaluator, contact
information, calibrated on 4 items and scoring 3 rows against tests/judge_server.py, and one
embedding evaluator, answer semantic similarity, whose rows the run records so that the replay
encodes nothing. The whole quickstart (its local-model evaluators included) is packed and replayed
with every model closed in tests/test_quickstart.py.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from conftest import REPO
from judge_server import JudgeServer, write_llm_configs

EVALUATORS = [{"id": "text_matching", "categories": ["rag"]}, "pii_leakage",
              {"id": "bleu", "categories": ["summarization"]}, {"id": "classification", "categories": ["classification"]},
              {"id": "contact_information", "categories": ["privacy"], "max_rows": 3},
              {"id": "answer_semantic_similarity", "categories": ["rag"]},
              # BYOP names its calibration set by a parameter: the file travels in the pack.
              {"id": "byop", "categories": ["rag"], "max_rows": 3,
               "params": {"calibration_set": str(REPO / "examples" / "byop_calibration.jsonl")}}]
#: The files whose bytes a replay changes, only in timestamps, durations and paths (checked below), besides
#: each evaluator's log (every line starts with its time) and BYOP's descriptor (its calibration set's path).
TIMED_FILES = {"run.json", "journal.jsonl", "index.html"}


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pack")
    with JudgeServer(default="absent") as server:
        configs = write_llm_configs(folder / "llm.yaml", server.base_url)
        cache = folder / "cache.sqlite"
        # The judge always answers "absent", so it fails its calibrations: score_untrusted scores the rows anyway,
        # so that the pack holds verdicts as well as calibration answers (tests/core/test_untrusted_gate.py packs
        # a run whose untrusted judge scored nothing).
        result = sonar_core.run({"name": "qs", "dataset": "demo", "calibration_items": 4, "evaluators": EVALUATORS,
                                 "score_untrusted": True},
                                llm_configs=str(configs), llm_cache=str(cache), output_dir=str(folder / "reports"),
                                run_id="qs")
        assert result.status == "success", result.message
        calls = server.calls
    assert calls == 2 * (4 + 3)  # two judge evaluators: 4 calibration items and 3 rows each
    # An entry the run did not use: the pack must leave it out.
    with sqlite3.connect(cache) as db:
        db.execute("INSERT INTO responses VALUES ('unrelated', 'x', '{}', 'secret answer', 0)")
    target = folder / "qs.zip"
    outcome = CliRunner().invoke(cli, ["pack", str(result.run_dir), "-o", str(target)])
    assert outcome.exit_code == 0, outcome.output
    return result.run_dir, target, calls


def archive_bytes(pack: Path, member: str) -> bytes:
    with zipfile.ZipFile(pack) as archive:
        return archive.read(member)


def _replay(monkeypatch, tmp_path, pack: Path):
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("SONAR_HOME", str(home))
    return CliRunner().invoke(cli, ["replay", str(pack), "-o", str(tmp_path / "replay")])


def test_the_pack_holds_the_run_its_inputs_and_only_the_answers_it_used(packed, tmp_path):
    run_dir, pack, calls = packed
    with zipfile.ZipFile(pack) as archive:
        members = set(archive.namelist())
        manifest = json.loads(archive.read(names.PACK_MANIFEST))
        archive.extract("inputs/cache.sqlite", tmp_path)
    run_files = {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()}
    assert members == {names.PACK_MANIFEST, "inputs/cache.sqlite", "inputs/llm-configs.yaml",
                       "inputs/calibration/6-byop_calibration.jsonl",
                       *(f"run/{name}" for name in run_files)}
    assert {"run/run.json", "run/journal.jsonl", "run/index.html", f"run/{names.CACHE_KEYS}"} <= members
    assert manifest["run_id"] == "qs" and manifest["inputs"]["dataset"] is None  # the bundled demo
    assert archive_bytes(pack, "inputs/calibration/6-byop_calibration.jsonl") == (
        REPO / "examples" / "byop_calibration.jsonl").read_bytes()
    used = json.loads((run_dir / names.CACHE_KEYS).read_text(encoding="utf-8"))["responses"]
    with sqlite3.connect(tmp_path / "inputs" / "cache.sqlite") as db:
        keys = sorted(k for (k,) in db.execute("SELECT key FROM responses"))
    assert keys == used and len(keys) == calls


def test_replay_rebuilds_every_artifact_without_any_call(packed, monkeypatch, tmp_path):
    run_dir, pack, _ = packed  # the judge server is stopped: any call would fail
    outcome = _replay(monkeypatch, tmp_path, pack)
    assert outcome.exit_code == 0, outcome.output
    rebuilt = tmp_path / "replay" / "qs"
    assert outcome.stdout == (f"Replayed into {rebuilt}: every file identical to the pack apart from timestamps, "
                              "durations, paths and how answers were obtained\n")
    before = {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()}
    after = {p.relative_to(rebuilt).as_posix() for p in rebuilt.rglob("*") if p.is_file()}
    # costs.md is the calls' cost: the replay reads every answer from the cache and calls nothing (docs/costs.md).
    assert names.COSTS_MD in before and before - {names.COSTS_MD} == after
    before.discard(names.COSTS_MD)
    changed = {name for name in before if (run_dir / name).read_bytes() != (rebuilt / name).read_bytes()}
    logs = {name for name in before if name.endswith(".log")}  # each line starts with its time
    # BYOP's descriptor names its calibration set, which the replay reads from the pack: a path only.
    (byop,) = [name for name in before if name.startswith("explainer_sonar_plugins_judge_byop_")
               and name.endswith(names.RESULT_DESCRIPTOR)]
    assert changed == TIMED_FILES | logs | {byop}
    packed_set = tmp_path / "replay" / ".pack" / "inputs" / "calibration" / "6-byop_calibration.jsonl"
    original_set = str(REPO / "examples" / "byop_calibration.jsonl")
    assert (run_dir / byop).read_text(encoding="utf-8").replace(original_set, str(packed_set)) == (
        rebuilt / byop).read_text(encoding="utf-8")
    # index.html: the run's start time, and the costs of its calls (the replay made none), are the only differences.
    old, new = ((d / "index.html").read_text(encoding="utf-8") for d in (run_dir, rebuilt))
    created = [json.loads((d / names.RUN_JSON).read_text(encoding="utf-8"))["created"] for d in (run_dir, rebuilt)]
    assert '<h2 id="costs">' in old and '<h2 id="costs">' not in new
    assert 'id="costs-line"' in old and 'id="costs-line"' not in new  # the costs in one line, under the headline
    line = old.index('<p class="costs-line" id="costs-line">')
    old = old[:line] + old[old.index("</p>", line) + 4:]
    old = old[:old.index('<h2 id="costs">')] + old[old.index("</table>", old.index('<h2 id="costs">')) + 9:]
    assert old.replace(created[0], created[1]) == new


def _without_one_answer(pack: Path, tmp_path: Path, reseal: bool) -> Path:
    """``pack`` less one cached answer; ``reseal``: pack.json's SHA-256 of the cache updated to match."""
    damaged = tmp_path / f"damaged-{reseal}.zip"
    cache = tmp_path / "cache.sqlite"
    with zipfile.ZipFile(pack) as source:
        cache.write_bytes(source.read("inputs/cache.sqlite"))
        db = sqlite3.connect(cache)
        db.execute("DELETE FROM responses WHERE key = (SELECT MIN(key) FROM responses)")
        db.commit()
        db.close()
        manifest = json.loads(source.read(names.PACK_MANIFEST))
        if reseal:
            manifest["files"]["inputs/cache.sqlite"] = hashlib.sha256(cache.read_bytes()).hexdigest()
            manifest["sizes"]["inputs/cache.sqlite"] = cache.stat().st_size
        with zipfile.ZipFile(damaged, "w") as target:
            for info in source.infolist():
                data = {"inputs/cache.sqlite": cache.read_bytes(),
                        names.PACK_MANIFEST: json.dumps(manifest).encode()}.get(info.filename) or source.read(info)
                target.writestr(info, data)
    return damaged


def test_a_damaged_pack_is_refused_in_one_line(packed, monkeypatch, tmp_path):
    _, pack, _ = packed
    outcome = _replay(monkeypatch, tmp_path, _without_one_answer(pack, tmp_path, reseal=False))
    assert outcome.exit_code == 3
    assert outcome.stderr == (f"error: {tmp_path / 'damaged-False.zip'}: member 'inputs/cache.sqlite' is missing or "
                              "damaged (its SHA-256 differs from pack.json's)\n")


def test_a_pack_missing_an_answer_stops_the_replay_in_one_line(packed, monkeypatch, tmp_path):
    _, pack, _ = packed
    outcome = _replay(monkeypatch, tmp_path, _without_one_answer(pack, tmp_path, reseal=True))
    assert outcome.exit_code == 3
    (line,) = outcome.stderr.splitlines()
    assert line.startswith("error: ") and "no cached answer for request" in line


@pytest.mark.parametrize("member", ["../evil.txt", "/tmp/evil.txt", "run/../../evil.txt", "elsewhere/x.txt",
                                    "run\\..\\..\\evil.txt"])
def test_a_member_outside_the_output_folder_is_refused(member, monkeypatch, tmp_path):
    pack = tmp_path / "evil.zip"
    with zipfile.ZipFile(pack, "w") as archive:
        archive.writestr(names.PACK_MANIFEST, "{}")
        archive.writestr(member, "pwned")
    outcome = _replay(monkeypatch, tmp_path, pack)
    assert outcome.exit_code == 3
    assert outcome.stderr == f"error: pack member {member!r} would be written outside the output folder; refusing the pack\n"
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()


def test_a_link_member_is_refused(monkeypatch, tmp_path):
    pack = tmp_path / "link.zip"
    with zipfile.ZipFile(pack, "w") as archive:
        info = zipfile.ZipInfo("run/link")
        info.external_attr = (0o120777 << 16)
        archive.writestr(info, "/etc/passwd")
    outcome = _replay(monkeypatch, tmp_path, pack)
    assert outcome.exit_code == 3 and outcome.stderr == "error: pack member 'run/link' is a link; refusing the pack\n"


def test_replay_wants_an_empty_folder(packed, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    outcome = CliRunner().invoke(cli, ["replay", str(packed[1]), "-o", str(tmp_path / "full")])
    assert outcome.exit_code == 2 and outcome.stderr == f"error: {tmp_path / 'full'}: the output folder is not empty\n"
