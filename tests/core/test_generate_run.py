"""sonar generate end to end against the scripted chat server (tests/generation_script.py), with the real
embedding model on the bundled demo documents (about a dozen chunks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import sonar_core
from generation_script import UNANSWERED_MARK, Faulty, judge_reply, reply
from judge_server import JudgeServer, write_llm_configs
from sonar_core.generate_config import GenerateSpec
from sonar_core.generation.run import run_generation

DEMO = Path(sonar_core.__file__).parent / "demo" / "docs"


@pytest.fixture
def server():
    with JudgeServer(default=reply) as running:
        yield running


def spec_for(tmp_path: Path, server, **settings) -> GenerateSpec:
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=4, backoff=0.01)
    values = {"docs": [str(DEMO)], "n": 10, "output": str(tmp_path / "out" / "suite.jsonl"),
              "llm_configs": str(configs), "llm_cache": str(tmp_path / "cache.sqlite"), "calibrate": False,
              "device": "cpu", **settings}
    return GenerateSpec.model_validate(values)


def suite_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def generation_prompts(server) -> list[str]:
    return [c.prompt for c in server.requests if "[[chunk:" in c.prompt]


def test_malformed_replies_lose_no_item_and_a_rerun_makes_no_call_and_the_same_suite(tmp_path, server):
    faulty = Faulty()  # 3 of every 10 generation replies are cut short
    server.default = faulty
    spec = spec_for(tmp_path, server)
    result = run_generation(spec)
    counts = result.findings.counts
    assert counts["failed"] == 0 and counts["planned"] == 10
    assert faulty.unreadable >= 3  # the faults happened...
    assert len(generation_prompts(server)) == 10 + faulty.unreadable  # ...and each cost exactly one re-ask
    journal = [json.loads(line) for line in (tmp_path / "out" / "suite.journal.jsonl").read_text().splitlines()]
    reasked = [e for e in journal if e["message"] == "wrote item" and e.get("unreadable")]
    assert sum(len(e["unreadable"]) for e in reasked) == faulty.unreadable
    assert all(e["unreadable"][0] == "no JSON object with 'question' and 'answer' in the reply" for e in reasked)
    suite = result.suite.read_bytes()
    lines = suite_of(result.suite)
    assert len(lines) == counts["kept"] and counts["kept"] + counts["dropped"] == 10
    first = lines[0]
    assert set(first) == {"test_case_key", "input", "expected_output", "context", "categories", "provenance", "quality"}
    assert set(first["provenance"]) >= {"source", "chunk_ids", "type", "persona", "style", "seed", "generator",
                                        "prompt_version", "language"}
    assert first["provenance"]["generator"] == "test-judge" and first["provenance"]["prompt_version"] == "generate-1"
    assert set(first["quality"]) >= {"groundedness", "answerability", "self_contained", "language_match",
                                     "near_duplicate", "score"}
    server.reset()
    again = run_generation(spec)
    assert server.calls == 0 and again.suite.read_bytes() == suite
    assert again.findings.graph["reused"] is True


def test_the_dry_run_predicts_the_calls_exactly(tmp_path, server):
    spec = spec_for(tmp_path, server, calibrate=True, n=12)
    estimate = run_generation(spec, dry_run=True).estimate
    assert server.calls == 0 and not (tmp_path / "out").exists()
    result = run_generation(spec)
    assert estimate["calls"]["total"] == server.calls == estimate["calls"]["test-judge"]
    assert result.findings.counts["planned"] == 12
    server.reset()
    assert run_generation(spec, dry_run=True).estimate["calls"]["total"] == 0  # everything is cached now


def test_a_file_given_twice_yields_no_duplicate_items(tmp_path, server):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DEMO / "northwind-home-policy.md", docs / "policy.md")
    shutil.copy(DEMO / "northwind-home-policy.md", docs / "policy-copy.md")
    result = run_generation(spec_for(tmp_path, server, docs=[str(docs)], n=8))
    assert result.findings.graph["duplicates"] == 6  # every chunk of the copy
    lines = suite_of(result.suite)
    # Files are read in name order ("policy-copy.md" sorts before "policy.md"): the first copy is kept.
    assert {line["provenance"]["source"] for line in lines} == {"docs/policy-copy.md"}
    assert len({line["input"] for line in lines}) == len(lines)
    chunk_sets = [(line["provenance"]["type"], tuple(line["provenance"]["chunk_ids"]), line["input"]) for line in lines]
    assert len(set(chunk_sets)) == len(chunk_sets)


def test_german_and_english_documents_yield_items_in_their_own_language(tmp_path, server):
    result = run_generation(spec_for(tmp_path, server, n=10, spread="sources"))
    lines = suite_of(result.suite)
    by_language = {}
    for line in lines:
        source = line["provenance"]["source"]
        by_language.setdefault(line["categories"][1], set()).add(source)
        assert line["quality"]["language_match"] == 1
    assert by_language["de"] == {"docs/hausrat-merkblatt-de.md"}
    assert "docs/hausrat-merkblatt-de.md" not in by_language["en"]
    german = [line for line in lines if line["categories"][1] == "de"]
    assert german and all(line["input"].startswith(("Stimmt es", "Gibt es")) for line in german)
    assert set(result.findings.coverage["language"]) == {"de", "en"}


def test_an_unanswerable_item_is_checked_against_the_documents(tmp_path, server):
    # The judge finds an answer in the documents for every question: unanswerable items must go.
    server.default = lambda prompt: (judge_reply(prompt).replace(": no", ": yes") if "For each item:" in prompt
                                     else reply(prompt))
    result = run_generation(spec_for(tmp_path, server, n=10, types={"unanswerable": 1, "single_hop": 1}))
    dropped = [d for d in result.findings.dropped if d.type == "unanswerable"]
    assert len(dropped) == 5 and all("answerability" in d.reason for d in dropped)
    assert all(line["categories"][0] == "single_hop" for line in suite_of(result.suite))
    # What the judge saw: the question with the corpus's closest chunks, not only the chunk it came from.
    judged = [c.prompt for c in server.requests if "can the QUESTION be answered" in c.prompt]
    block = next(b for b in judged[0].split("ITEM ")[1:] if UNANSWERED_MARK in b)
    assert block.count("\n- ") == 4


def test_an_untrusted_quality_judge_drops_nothing_and_says_so(tmp_path, server):
    # Always "yes" on the labelled sets (half of them "no"): kappa 0, below 0.4.
    server.default = lambda prompt: judge_reply(prompt).replace(": no", ": yes") if "For each item:" in prompt \
        else reply(prompt)
    result = run_generation(spec_for(tmp_path, server, n=6, calibrate=True, types={"unanswerable": 1}))
    judges = result.findings.judges
    assert judges["groundedness"]["status"] == judges["answerability"]["status"] == "untrusted"
    assert judges["answerability"]["kappa"] == 0.0 and judges["answerability"]["items"] == 40
    lines = suite_of(result.suite)
    assert lines and all(line["quality"]["answerability"] == 0 for line in lines)
    assert all("answerability" not in line["quality"]["counted"] for line in lines)
    html = (tmp_path / "out" / "suite.report.html").read_text(encoding="utf-8")
    assert "is untrusted: kappa 0.00" in html


def test_an_empty_result_says_why_in_the_report_and_the_exit_code(tmp_path, server):
    server.default = "I cannot help with that."
    result = run_generation(spec_for(tmp_path, server, n=3))
    assert result.exit_code == 1
    assert result.message == ("no item kept: every item failed to be written (the first: no readable reply in 5 "
                              "attempt(s): no JSON object with 'question' and 'answer' in the reply)")
    report = json.loads((tmp_path / "out" / "suite.report.json").read_text(encoding="utf-8"))
    assert report["status"] == "empty" and report["empty_reason"] == result.message.removeprefix("no item kept: ")
    assert result.suite.read_text() == ""
    assert len(generation_prompts(server)) == 15  # 3 items x 5 attempts


def test_the_suite_is_a_test_suite_sonar_run_takes_as_it_is(tmp_path, server):
    result = run_generation(spec_for(tmp_path, server, n=4))
    run = sonar_core.run(test_suite=str(result.suite), output_dir=str(tmp_path / "runs"), run_id="r",
                         hosts=[{"key": "lookup", "kind": "python", "callable": "sonar_core.demo.lookup_host:answer"}],
                         evaluators=["text_matching"])
    assert run.status == "success", run.message
    answers = [json.loads(line) for line in (tmp_path / "runs" / "r" / "dataset" / "answers.jsonl").read_text().splitlines()]
    assert sorted(a["test_case_key"] for a in answers) == sorted(line["test_case_key"] for line in suite_of(result.suite))


def test_killed_then_started_again_asks_no_finished_item_again(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    with JudgeServer(default=reply, latency=0.4) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=1)
        out = tmp_path / "out" / "suite.jsonl"
        args = ["generate", "--docs", str(DEMO), "-n", "8", "-o", str(out), "--llm-configs", str(configs),
                "--llm-cache", str(tmp_path / "cache.sqlite"), "--no-calibrate", "--device", "cpu"]
        child = subprocess.Popen([sys.executable, "-c", "from sonar_core.cli import main; main()", *args],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = tmp_path / "out" / "suite.journal.jsonl"
        deadline = time.monotonic() + 600
        try:
            while time.monotonic() < deadline:
                text = journal.read_text(encoding="utf-8") if journal.exists() else ""
                if text.count('"message": "fetched annotator response"') >= 3:  # answered and cached
                    break
                assert child.poll() is None, "the generation ended before it could be killed"
                time.sleep(0.1)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(timeout=60)
        asked_before = server.calls
        events = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines() if line.strip()]
        finished = {e["request"]["messages"][-1]["content"] for e in events
                    if e["message"] == "fetched annotator response" and e.get("evaluator") == "generate"}
        assert 3 <= len(finished) < 8
        result = sonar_core.generate(DEMO, n=8, output=out, llm_configs=str(configs),
                                     llm_cache=str(tmp_path / "cache.sqlite"), calibrate=False, device="cpu")
        asked_after = [c.prompt for c in server.requests[asked_before:] if "[[chunk:" in c.prompt]
        assert finished.isdisjoint(asked_after)
        assert len(asked_after) == 8 - len(finished)  # only what had not finished
        assert result.findings.counts["planned"] == 8 and result.findings.counts["failed"] == 0


def test_a_budget_stops_asking_keeps_what_was_answered_and_a_rerun_finishes(tmp_path, server):
    from sonar_core.errors import BudgetExceeded

    prices = {"test-judge": {"input_per_1k": 1.0, "output_per_1k": 0.0}}  # about $0.3 a generation prompt
    spec = spec_for(tmp_path, server, n=10, max_cost=1.0, prices=prices)
    with pytest.raises(BudgetExceeded) as info:
        run_generation(spec)
    assert str(info.value).startswith("budget reached: spent $")
    assert not (tmp_path / "out" / "suite.jsonl").exists()
    report = json.loads((tmp_path / "out" / "suite.report.json").read_text(encoding="utf-8"))
    assert report["status"] == "empty" and report["notes"][-1].startswith("budget reached")
    answered = len(generation_prompts(server))
    assert 1 <= answered < 10
    server.reset()
    result = run_generation(spec.model_copy(update={"max_cost": None}))
    assert len(generation_prompts(server)) == 10 - answered  # the answered items were not asked again
    assert result.findings.counts["planned"] == 10 and result.exit_code == 0
