"""A replay proves or disproves (issue 35): an honest judge run, however its answers were obtained, replays
identical; one changed verdict does not.

The run is the hard case: two judge evaluators and BLEU over 60 rows with the judge's key in an environment
variable, a judge (tests/judge_server.py) that answers without log-probabilities and answers every 7th call
with a 429, 8 calls in flight (adaptive concurrency: the limit halves and grows back), killed with SIGKILL
once the first judge evaluator has finished, resumed from another working directory, and packed from a
third. Its journal then holds two processes' parts, retries, limit changes and "judge gives no logprobs",
answers in arrival order; none of that is what the run concluded.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from sonar_core import names
from judge_server import JudgeServer, write_llm_configs

ROWS = [{"test_case_key": f"t{i}", "model_key": model, "input": f"Question {i}?",
         "expected_output": f"Answer {i}",
         "actual_output": f"Answer {i} from {model}" + (" - call Jo on 555-0100" if i % 5 == 0 else "")}
        for i in range(30) for model in ("m1", "m2")]
KEY_VARIABLE = "SONAR_TEST_JUDGE_KEY"


def _events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def packed(tmp_path_factory, sonar_cli_module):
    root = tmp_path_factory.mktemp("evidence")
    work, elsewhere = root / "work", root / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "d.json").write_text(json.dumps(ROWS), encoding="utf-8")
    env = {**os.environ, KEY_VARIABLE: "sk-test-0123456789", "SONAR_HOME": str(root / "home")}
    with JudgeServer(script=[("555-0100", "present")], default="absent", latency=0.02, rate_limit_every=7,
                     retry_after=0, ignore_logprobs=True) as server:
        write_llm_configs(work / "llm.yaml", server.base_url, api_key_env=KEY_VARIABLE, max_concurrency=8,
                          backoff=0.01)
        # Relative paths, from the working directory: the run records where they lead.
        command = [sonar_cli_module, "run", "--no-progress", "-d", "d.json", "-e", "bleu", "-e", "contact_information",
                   "-e", "sexism", "--llm-configs", "llm.yaml", "--llm-cache", "cache.sqlite", "--calibration-items", "4",
                   "--score-untrusted",  # the scripted judge fails calibration: score it anyway
                   "--run-id", "r", "-o", "out"]
        process = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run_dir = work / "out" / "r"
        deadline = time.time() + 120
        # Killed as soon as contact_information's done marker is written: it is finished, sexism is not.
        while time.time() < deadline and process.poll() is None and not list(
                run_dir.glob(f"*_ContactInformationEvaluator_*/{names.DONE_MARKER}")):
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
        resumed = subprocess.run([sonar_cli_module, "run", "--no-progress", "--resume", str(run_dir)], cwd=elsewhere,
                                 env=env, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        stats = {"calls": server.calls, "max_in_flight": server.max_in_flight, "outcomes": server.outcomes()}
    pack = root / "r.zip"
    made = subprocess.run([sonar_cli_module, "pack", str(run_dir), "-o", str(pack)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    return run_dir, pack, stats


@pytest.fixture(scope="module")
def sonar_cli_module():
    import sys

    return str(Path(sys.executable).parent / "sonar")


def _replay(sonar_cli: str, pack: Path, out: Path, home: Path) -> subprocess.CompletedProcess:
    """``sonar replay`` with the key variable unset and SONAR_HOME an empty folder."""
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != KEY_VARIABLE}
    env["SONAR_HOME"] = str(home)
    return subprocess.run([sonar_cli, "replay", str(pack), "-o", str(out)], cwd=home, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_run_was_concurrent_rate_limited_killed_and_resumed(packed):
    """The conditions the replay must see through are there: else the next test proves nothing."""
    run_dir, _, stats = packed
    assert stats["max_in_flight"] > 1 and stats["outcomes"].get("rate_limited", 0) > 0
    messages = [e["message"] for e in _events(run_dir)]
    assert messages.count("starting journal") == 2 and "resuming run" in messages
    assert "skipping finished evaluator" in messages  # contact_information finished before the kill
    for how in ("judge gives no logprobs", "concurrency limit changed", "retrying annotator request"):
        assert how in messages, how
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["status"] == "success"
    # The run recorded where its relative paths lead: the resume and the pack above ran elsewhere.
    parameters = record["interpretation_parameters"]
    assert parameters["dataset"] == "d.json" and parameters["base_dir"] == str(run_dir.parent.parent)
    assert parameters["run_id"] == "r"
    assert record["result"]["dataset"]["source"] == "d.json"  # shown as given


def test_an_honest_replay_without_the_key_or_a_home_exits_0(packed, tmp_path, sonar_cli_module):
    _, pack, _ = packed
    outcome = _replay(sonar_cli_module, pack, tmp_path / "replay", tmp_path / "empty-home")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert outcome.stdout == (f"Replayed into {tmp_path / 'replay' / 'r'}: every file identical to the pack apart "
                              "from timestamps, durations, paths and how answers were obtained\n")
    assert outcome.stderr == ""


def _reseal(pack: Path, target: Path, member: str, data: bytes) -> Path:
    """``pack`` with ``member`` replaced by ``data``, and pack.json's SHA-256 and size of it updated."""
    with zipfile.ZipFile(pack) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        manifest = json.loads(source.read(names.PACK_MANIFEST))
        manifest["files"][member] = hashlib.sha256(data).hexdigest()
        manifest["sizes"][member] = len(data)
        for info in source.infolist():
            out.writestr(info.filename, json.dumps(manifest) if info.filename == names.PACK_MANIFEST
                         else data if info.filename == member else source.read(info))
    return target


def test_one_changed_verdict_exits_1_naming_the_evaluators_files(packed, tmp_path, sonar_cli_module):
    """The judge's answer to one row is changed in the packed cache (and the pack resealed): the replay
    rebuilds that verdict from it, and every file of contact_information that holds it differs."""
    _, pack, _ = packed
    cache = tmp_path / "cache.sqlite"
    with zipfile.ZipFile(pack) as archive:
        cache.write_bytes(archive.read("inputs/cache.sqlite"))
    db = sqlite3.connect(cache)
    (key, response), = db.execute("SELECT key, response FROM responses WHERE request LIKE ? AND request LIKE ?",
                                  ('%Answer 3 from m1%', '%contact information%')).fetchall()
    assert json.loads(response)["text"] == "absent"
    db.execute("UPDATE responses SET response = ? WHERE key = ?",
               (json.dumps({**json.loads(response), "text": "present"}), key))
    db.commit()
    db.close()
    tampered = _reseal(pack, tmp_path / "tampered.zip", "inputs/cache.sqlite", cache.read_bytes())
    outcome = _replay(sonar_cli_module, tampered, tmp_path / "replay", tmp_path / "empty-home")
    assert outcome.returncode == 1, outcome.stdout + outcome.stderr
    lines = outcome.stdout.splitlines()
    assert lines[0].endswith("file(s) differ from the pack:")
    listed = {line.split(": ", 1)[0].strip(): line.split(": ", 1)[1] for line in lines[1:]}
    folder = next(name.split("/")[0] for name in listed if "_ContactInformationEvaluator_" in name)
    results = f"{folder}/{names.EVAL_RESULTS}/application_json/explanation.json"
    # The row t3 of m1 is the 7th row (t0..t3 of m1 and m2, dataset order): it passed, it now fails.
    assert listed[results] == "results[6].no_contact_information_leakages: 1.0 != 0.0"
    assert f"{folder}/evaluator_summary.json" in listed
    # Every other file listed shows that verdict: the run's pages and the journal's answer; nothing of sexism or BLEU.
    others = {name for name in listed if not name.startswith(folder + "/")}
    assert {"index.html", "test_cases.html", names.JOURNAL} <= others
    assert {name for name in others if name.startswith(names.CASES_DIR + "/")} == {
        f"{names.CASES_DIR}/{names.case_page_name('t3')}"}
    assert others <= {"index.html", "test_cases.html", names.JOURNAL, names.RUN_JSON,
                      f"{names.CASES_DIR}/{names.case_page_name('t3')}"}
