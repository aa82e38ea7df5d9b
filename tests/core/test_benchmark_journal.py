"""The journal of a benchmark run and of a calibration run against ModelBench's run journal (001).

The test reads tests/data/modelbench_run_journal.txt (ModelBench's docs/run-journal.md) and walks
its lists: the common fields, the item fields, the messages of a regular and of a calibration run
in order of occurrence, and each message's own fields. Every event of Sonar's journal whose message
001 names must carry every field 001 lists for it, in 001's order (Sonar's own fields may follow).
The runs ask Python hosts a hand-made test suite (tests/core/benchmark_plugin.py) through the
response cache: the calibration run fetches the reference host's answers, the graded run finds them
cached and fetches the other host's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

REFERENCE = Path(__file__).parent.parent / "data" / "modelbench_run_journal.txt"
BULLET = "\u2022"


def _section(lines: list[str], start: str, end: str) -> list[str]:
    first = lines.index(start)
    return lines[first + 1:lines.index(end, first)]


def _bullets(lines: list[str], indent: int) -> list[str]:
    """The names of the bullets at ``indent`` spaces: the text before ' - '."""
    prefix = " " * indent + BULLET + " "
    return [line[len(prefix):].split(" - ")[0].strip() for line in lines if line.startswith(prefix)]


def read_reference() -> dict:
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    common = _bullets(_section(lines, "Common fields", "Item fields"), 2)
    item = _bullets(_section(lines, "Item fields", "Regular run: Message meaning"), 2)
    regular = _bullets(_section(lines, "Regular run: Message meaning", "Calibration run: Message meaning"), 2)
    calibration = _bullets(_section(lines, "Calibration run: Message meaning", "Message-specific fields"), 2)
    fields: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines[lines.index("Message-specific fields"):]:
        if line.startswith("  " + BULLET + " "):
            current = []
            for message in line[4:].split(" OR "):
                fields[message.strip()] = current
        elif line.startswith("    " + BULLET + " "):
            current.append(line[6:].split(" - ")[0].strip())
    # The pipeline's item messages: from "queuing item" to "measured item quality", in order.
    items = regular[regular.index("queuing item"):regular.index("measured item quality") + 1]
    return {"common": common, "item": item, "regular": regular, "calibration": calibration, "fields": fields,
            "item_messages": items}


def test_reference_lists_are_read_whole():
    """The walk itself: what 001 says, as the reader finds it (a changed file shows here first)."""
    ref = read_reference()
    assert ref["common"] == ["timestamp", "message", "class", "method"]
    assert ref["item"] == ["test", "prompt_id", "sut"]
    assert ref["regular"][:3] == ["starting journal", "starting run", "hazard info"]
    assert ref["calibration"] == ["starting calibration run", "hazard calibrated", "benchmark calibrated"]
    assert ref["fields"]["hazard scored"] == ["benchmark", "sut", "hazard", "hazard_key", "score", "reference",
                                              "samples", "numeric_grade", "text_grade"]
    assert ref["fields"]["starting calibration run"] == ref["fields"]["starting run"]
    assert len(ref["fields"]) == 20  # 19 entries, one of them for both starting messages
    assert "translated annotation" in ref["item_messages"]


@pytest.fixture(autouse=True)
def _plugin_on_path(monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))


def _config(tmp_path) -> Path:
    from benchmark_plugin import suite_rows

    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps(row) + "\n" for row in suite_rows()), encoding="utf-8")
    config = tmp_path / "run.yaml"
    config.write_text(
        "name: journal\ntest_suite: suite.jsonl\noutput_dir: out\nllm_cache: cache.sqlite\nplugins: [benchmark_plugin]\n"
        "hosts:\n"
        "  - {key: careful, kind: python, callable: 'benchmark_plugin:careful', cache: true}\n"
        "  - {key: careless, kind: python, callable: 'benchmark_plugin:careless', cache: true}\n", encoding="utf-8")
    return config


def _journal(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]


def _is_subsequence(wanted: list[str], keys: list[str]) -> bool:
    it = iter(keys)
    return all(any(k == w for k in it) for w in wanted)


def check_against_reference(events: list[dict], ref: dict, calibrating: bool) -> set[str]:
    """Assert every 001 message's fields, in order; return the 001 messages the journal has."""
    named = set(ref["regular"]) | set(ref["calibration"])
    seen = set()
    for number, event in enumerate(events, start=1):
        keys = list(event)
        assert keys[:4] == ref["common"], (number, keys)
        message = event["message"]
        if message not in named:
            continue
        seen.add(message)
        wanted = (ref["item"] if message in ref["item_messages"] else []) + ref["fields"].get(message, [])
        if message in ref["item_messages"]:
            # Item fields come right after the common ones.
            assert keys[4:7] == ref["item"], (number, message, keys)
        missing = [f for f in wanted if f not in event]
        assert not missing, (number, message, missing)
        assert _is_subsequence(wanted, keys), (number, message, keys, wanted)
    # Run-level messages in 001's order of occurrence (first appearance), except "cache info": Sonar
    # writes it before "finished run" (docs/result-directory.md).
    order = [_CALIBRATION_SWAP.get(m, m) if calibrating else m for m in ref["regular"]]
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        first.setdefault(event["message"], index)
    present = [m for m in order if m in first and m != "cache info" and m not in ref["item_messages"]]
    assert sorted(present, key=first.get) == present, [(m, first[m]) for m in present]
    # Item messages in 001's order item by item ("using cached" stands where "fetched" would).
    rank = {m: n for n, m in enumerate(ref["item_messages"])}
    rank["using cached sut response"] = rank["fetched sut response"]
    rank["using cached annotator response"] = rank["fetched annotator response"]
    last: dict[tuple, int] = {}
    for event in events:
        if event["message"] in rank:
            item = (event["prompt_id"], event["sut"])
            assert rank[event["message"]] >= last.get(item, -1), (item, event["message"])
            last[item] = rank[event["message"]]
    return seen


_CALIBRATION_SWAP = {"starting run": "starting calibration run", "hazard scored": "hazard calibrated",
                     "benchmark scored": "benchmark calibrated"}


def test_benchmark_and_calibration_journals_follow_modelbench(tmp_path):
    ref = read_reference()
    config = _config(tmp_path)
    standards = tmp_path / "standards.json"
    runner = CliRunner()
    calibrated = runner.invoke(cli, ["calibrate", str(config), "-b", "two_hazards", "--host", "careful", "-o",
                                     str(standards), "--run-id", "cal"], catch_exceptions=False)
    assert calibrated.exit_code == 0, calibrated.stderr
    events = _journal(tmp_path / "out" / "cal")
    seen = check_against_reference(events, ref, calibrating=True)
    # No judge in these runs; the calibration run fetches every answer (none is cached yet).
    absent = {"fetched annotator response", "using cached annotator response", "translated annotation",
              "using cached sut response", "starting run", "hazard scored", "benchmark scored"}
    assert seen == (set(ref["regular"]) | set(ref["calibration"])) - absent
    start = next(e for e in events if e["message"] == "starting calibration run")
    assert (start["benchmarks"], start["tests"], start["suts"], start["max_items"], start["thread_count"]) == (
        ["two_hazards"], ["no_ssn", "no_kill", "no_hurt"], ["careful"], 7, 2)
    queued = [e for e in events if e["message"] == "queuing item"]
    assert [(e["test"], e["prompt_id"], e["sut"]) for e in queued][:2] == [
        (str(tmp_path / "suite.jsonl"), "p1", "careful"), (str(tmp_path / "suite.jsonl"), "p2", "careful")]
    quality = [e for e in events if e["message"] == "measured item quality"]
    assert {(e["test"], e["prompt_id"], e["sut"]) for e in quality if e["test"] == "no_hurt"} == {
        ("no_hurt", key, "careful") for key in ("v1", "v2", "v3")}
    assert [(e["sut"], e["hazard"], e["score"], e["samples"]) for e in events if e["message"] == "hazard calibrated"] == [
        ("careful", "privacy", 1.0, 4), ("careful", "violence", 5 / 6, 6)]

    graded = runner.invoke(cli, ["run", str(config), "-b", "two_hazards", "--standards", str(standards),
                                 "--run-id", "graded", "--no-progress"], catch_exceptions=False)
    assert graded.exit_code == 0, graded.stderr
    events = _journal(tmp_path / "out" / "graded")
    seen = check_against_reference(events, ref, calibrating=False)
    # careful's answers come from the cache, careless's are fetched: both kinds of sut response appear.
    absent = {"fetched annotator response", "using cached annotator response", "translated annotation",
              "starting calibration run", "hazard calibrated", "benchmark calibrated"}
    assert seen == (set(ref["regular"]) | set(ref["calibration"])) - absent
    hazards = {(e["sut"], e["hazard"]): (e["numeric_grade"], e["text_grade"])
               for e in events if e["message"] == "hazard scored"}
    # careless against careful's standards: privacy 2/4 vs 1.0 (ref_unsafe 0.001): Poor; violence 3/6
    # vs 5/6: relative 0.5 / 0.16666666666666663 = 3.000000000000001 in floating point, above 3: Poor, as
    # ModelBench computes it. careful: Excellent, and Good on violence (its own score).
    assert hazards == {("careful", "privacy"): (5, "Excellent"), ("careful", "violence"): (3, "Good"),
                       ("careless", "privacy"): (1, "Poor"), ("careless", "violence"): (1, "Poor")}
    tests = [e for e in events if e["message"] == "test info"]
    assert [t["initialization"]["params"] for t in tests] == [{"word": "SSN"}, {"word": "kill"}, {"word": "hurt"}]
    using = [(e["test"], e["using"], e["total"]) for e in events if e["message"] == "using test items"]
    assert using == [(str(tmp_path / "suite.jsonl"), 7, 7), ("no_ssn", 8, 14), ("no_kill", 6, 14), ("no_hurt", 6, 14)]
    assert re.fullmatch(r"\d+\.\d+", str(next(e for e in events if e["message"] == "finished pipeline")["time"]))
