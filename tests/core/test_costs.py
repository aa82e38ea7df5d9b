"""Tokens, cost, dry runs and budgets (docs/costs.md) against two scripted servers.

The servers count usage as a BPE tokenizer roughly would (``usage="tokens"``: words and punctuation,
a long word several tokens, a few tokens per message), which is not Sonar's estimate (4 characters
per token, 4 per message): the dry run's cost is an estimate, not the server's count by construction.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge_server import JudgeServer, bpe_like_tokens, write_llm_configs
from sonar_core import api, names
from sonar_core.cli import cli
from sonar_core.errors import EXIT_BUDGET

PRICES = {"m": {"input_per_1k": 1.0, "output_per_1k": 2.0}, "test-judge": {"input_per_1k": 0.5, "output_per_1k": 1.5}}


def _host_reply(prompt: str) -> str:
    # Answers of different lengths, so that a mean output is an estimate and not the answer.
    return "The capital is a large city with a long history of government." + " It grows." * (len(prompt) % 4)


def _suite(path: Path, count: int) -> Path:
    rows = [{"test_case_key": f"c{i}", "input": f"Question number {i}: what is the capital of country {i}, "
             f"and why does it matter to its people?"} for i in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(tmp_path: Path, host: JudgeServer, judge: JudgeServer, suite: Path, **extra) -> dict:
    configs = write_llm_configs(tmp_path / "llm.yaml", judge.base_url, max_concurrency=2)
    return {"test_suite": str(suite), "output_dir": str(tmp_path / "out"), "llm_cache": str(tmp_path / "cache.sqlite"),
            "llm_configs": str(configs), "evaluators": ["sexism"], "calibrate": False, "prices": PRICES,
            "hosts": [{"key": "m", "kind": "openai_chat", "base_url": host.base_url, "model": "m",
                       "max_concurrency": 2}], **extra}


def _server_cost(server: JudgeServer, price: dict) -> float:
    """What the server's usage says the calls cost, counted here from the requests it received."""
    total = 0.0
    for call in server.requests:
        prompt = 3 + sum(3 + bpe_like_tokens(m["content"]) for m in call.body["messages"])
        output = bpe_like_tokens(server.reply_for(call.prompt))
        total += prompt / 1000 * price["input_per_1k"] + output / 1000 * price["output_per_1k"]
    return total


def _entries(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_a_dry_run_counts_the_calls_the_run_then_makes_and_estimates_their_cost(tmp_path):
    with JudgeServer(default=_host_reply, usage="tokens") as host, JudgeServer(default="no", usage="tokens") as judge:
        # A first run over four test cases caches their answers (and tells the estimate how long answers are).
        first = api.run(_config(tmp_path, host, judge, _suite(tmp_path / "first.jsonl", 4)))
        assert first.exit_code == 0, first.message
        host.reset()
        judge.reset()
        # The judge always answers "no", so it fails its calibration: score_untrusted makes the run ask its
        # verdicts all the same (without it they would not be asked: tests/core/test_untrusted_gate.py).
        config = _config(tmp_path, host, judge, _suite(tmp_path / "suite.jsonl", 12), run_id="real",
                         calibrate=True, calibration_items=4, score_untrusted=True)
        cached_before = _entries(tmp_path / "cache.sqlite")
        calibration_cache = tmp_path / "judge-calibration.json"
        runner = CliRunner()
        config_file = tmp_path / "run.json.yaml"
        config_file.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
        shown = runner.invoke(cli, ["run", str(config_file), "--dry-run", "--json"], catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        estimate = json.loads(shown.output)
        # Nothing was asked, nothing written: no call, no cache entry, no calibration, no run folder.
        assert host.calls == 0 and judge.calls == 0
        assert _entries(tmp_path / "cache.sqlite") == cached_before
        assert not calibration_cache.exists()
        assert not (tmp_path / "out" / "real").exists()
        table = runner.invoke(cli, ["run", str(config_file), "--dry-run"], catch_exceptions=False)
        assert table.exit_code == 0
        assert table.output.splitlines()[0].split() == ["kind", "key", "calls", "input", "tokens", "output", "tokens",
                                                        "cost", "(USD)"]

        result = api.run(config)
        assert result.exit_code == 0, result.message
    # The calls still needed: 8 new test cases for the host; their 8 verdicts and 2 x 4 calibration items
    # (both labels, 4 items each... at most 4 in all) for the judge; the four cached rows cost nothing.
    assert estimate["calls"] == {"m": host.calls, "test-judge": judge.calls, "total": host.calls + judge.calls}
    assert host.calls == 8
    assert estimate["kinds"] == {"m": "host", "test-judge": "judge"}
    assert estimate["estimated"] == []  # sexism asks one question per row: its count is exact
    assert estimate["conditional"] == []  # scored whatever the calibration says
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    costs = record["costs"]
    assert costs["hosts"]["m"]["calls"] == 8 and costs["judges"]["test-judge"]["calls"] == judge.calls
    # The cost the servers' usage gives, counted independently here, is run.json's...
    actual = _server_cost(host, PRICES["m"]) + _server_cost(judge, PRICES["test-judge"])
    assert costs["total"]["cost"] == pytest.approx(actual, abs=1e-6)
    # ...and the dry run's estimate is within 10% of it, per key and in total.
    assert estimate["cost"]["total"] == pytest.approx(actual, rel=0.10)
    assert estimate["cost"]["m"] == pytest.approx(_server_cost(host, PRICES["m"]), rel=0.10)
    assert estimate["cost"]["test-judge"] == pytest.approx(_server_cost(judge, PRICES["test-judge"]), rel=0.10)


def test_the_run_records_tokens_and_cost_per_host_judge_and_evaluator(tmp_path):
    with JudgeServer(default="Paris is the capital.", usage="words") as host, \
            JudgeServer(default="no", usage="words") as judge:
        result = api.run(_config(tmp_path, host, judge, _suite(tmp_path / "s.jsonl", 2)))
        prompts = [c.prompt for c in host.requests]
    assert result.exit_code == 0, result.message
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    # Whitespace words (usage="words"): each question is 18 words, each answer 4; verdicts 1 word.
    assert [len(p.split()) for p in prompts] == [18, 18]
    host_cost = 2 * (18 / 1000 * 1.0 + 4 / 1000 * 2.0)
    judge_in = sum(len(c.prompt.split()) for c in judge.requests)
    judge_cost = judge_in / 1000 * 0.5 + 2 / 1000 * 1.5
    assert record["costs"]["hosts"] == {"m": {"calls": 2, "input_tokens": 36, "output_tokens": 8,
                                              "cost": pytest.approx(host_cost)}}
    assert record["costs"]["judges"] == {"test-judge": {"calls": 2, "input_tokens": judge_in, "output_tokens": 2,
                                                        "cost": pytest.approx(judge_cost)}}
    assert record["costs"]["evaluators"] == {"sexism": record["costs"]["judges"]["test-judge"]}
    assert record["costs"]["total"]["cost"] == pytest.approx(host_cost + judge_cost)
    assert "budget" not in record["costs"]
    # The clients' counters carry the tokens too, and the journal's fetched events each call's.
    assert record["llm"]["used"]["test-judge"]["input_tokens"] == judge_in
    assert record["pipeline"]["host_settings"]["m"]["output_tokens"] == 8
    events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
    fetched = [e for e in events if e["message"] == "fetched sut response"]
    assert sorted((e["input_tokens"], e["output_tokens"]) for e in fetched) == [(18, 4), (18, 4)]
    assert all(e["call_cost"] == pytest.approx(18 / 1000 + 8 / 1000) for e in fetched)
    # The report: index.html's table and costs.md.
    html = (result.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    assert 'id="cost-table"' in html and '<tr data-kind="evaluator"><td>evaluator</td><td>sexism</td>' in html
    markdown = (result.run_dir / names.COSTS_MD).read_text(encoding="utf-8")
    assert f"| host | m | 2 | 36 | 8 | {host_cost:.4f} |" in markdown


def test_a_run_without_calls_has_no_costs(tmp_path):
    rows = [{"test_case_key": "a", "model_key": "m", "input": "q", "actual_output": "x", "expected_output": "x"}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = api.run(dataset=str(tmp_path / "d.jsonl"), evaluators=["text_matching"], output_dir=str(tmp_path / "o"))
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert "costs" not in record
    assert not (result.run_dir / names.COSTS_MD).exists()


def _rows(result) -> list[dict]:
    table = result.rows().drop(columns=["actual_duration"], errors="ignore")
    return table.to_dict("records")


@pytest.mark.parametrize("share", [0.4, 0.8])  # stopped while the host answers; while the judge scores
def test_max_cost_stops_within_one_call_and_a_resume_finishes_the_run_as_without_a_budget(tmp_path, share):
    with JudgeServer(default=_host_reply, usage="tokens") as host, JudgeServer(default="no", usage="tokens") as judge:
        suite = _suite(tmp_path / "suite.jsonl", 10)
        (tmp_path / "ref").mkdir()
        reference = api.run(_config(tmp_path / "ref", host, judge, suite, run_id="ref") | {
            "llm_cache": str(tmp_path / "ref.sqlite")})
        assert reference.exit_code == 0
        full = json.loads((reference.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["costs"]["total"]["cost"]
        budget = round(full * share, 4)
        config_file = tmp_path / "budget.yaml"
        config_file.write_text(json.dumps(_config(tmp_path, host, judge, suite, run_id="b")), encoding="utf-8")
        stopped = CliRunner().invoke(cli, ["run", str(config_file), "--no-progress", "--max-cost", str(budget)],
                                     catch_exceptions=False)
        run_dir = tmp_path / "out" / "b"
        assert stopped.exit_code == EXIT_BUDGET == 7
        errors = [line for line in stopped.output.splitlines() if line.startswith("error: ")]
        assert errors == [f"error: {errors[0][7:]}"] and errors[0].startswith("error: budget reached: spent $")
        assert f"sonar run --resume {run_dir} --max-cost <higher>" in errors[0]
        record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
        assert record["status"] == "stopped_by_budget"
        spent = record["costs"]["budget"]["spent"]
        assert record["costs"]["budget"] == {"max_cost": budget, "spent": spent, "stopped": True}
        # Within one call's price of the budget, and never past it.
        events = [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
        prices = [e["call_cost"] for e in events if e["message"].startswith("fetched") and "call_cost" in e]
        assert spent == pytest.approx(sum(prices), abs=1e-6)
        assert budget - max(prices) < spent <= budget
        opened = api.open_run(run_dir)
        assert (opened.exit_code, opened.message, opened.costs) == (7, record["error"], record["costs"])
        messages = [e["message"] for e in events]
        assert "run stopped by budget" in messages and "finished run" not in messages
        # Finished work is kept: the hosts' answers so far.
        answered = (run_dir / "dataset" / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        host_calls = host.calls
        assert 0 < len(answered) <= 10

        resumed = api.resume(run_dir, max_cost=budget * 10)
        assert resumed.exit_code == 0, resumed.message
        # Nothing asked twice: the resumed run asked the host only the questions not answered before.
        assert host.calls - host_calls == 10 - len(answered)
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["status"] == "success"
    assert record["costs"]["total"]["cost"] == pytest.approx(full, abs=1e-6)  # the whole run's, resumes included
    assert record["costs"]["budget"] == {"max_cost": budget * 10, "spent": pytest.approx(full, abs=1e-6),
                                         "stopped": False}
    # Equal to the run without a budget: every row, value and problem (durations aside).
    assert _rows(resumed) == _rows(reference)
    assert record["result"]["problems"] == json.loads(
        (reference.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["result"]["problems"]


def test_a_dry_run_names_the_evaluators_whose_counts_are_estimates(tmp_path):
    from sonar_core.config import build_config
    from sonar_core.execution.dry_run import estimated_evaluators, format_estimate

    config = build_config({"dataset": "demo", "evaluators": ["faithfulness", "sexism", "text_matching"]})
    # faithfulness extracts statements, then asks about each: its later calls depend on earlier answers.
    assert estimated_evaluators(config) == ["faithfulness"]
    lines = format_estimate({"kinds": {}, "calls": {"total": 0}, "tokens": {"total": {"input": 0, "output": 0}},
                             "cost": {"total": None}, "estimated": ["faithfulness"],
                             "skipped": [{"evaluator": "x", "reason": "no judge"}]})
    assert lines[-2:] == ["'faithfulness' asks in steps that depend on earlier answers: its count is an estimate.",
                          "'x' would be skipped: no judge"]


@pytest.mark.parametrize("args, message", [
    (["-d", "demo", "--json"], "error: --json goes with --dry-run (a run's record is its run.json)"),
    (["-d", "demo", "--max-cost", "0"], "error: --max-cost must be a positive amount of USD, not 0"),
    (["-d", "demo", "-e", "text_matching", "--max-cost", "1", "--executor", "ray"],
     "error: --max-cost (max_cost) needs the local executor: under Ray the calls are made in the workers, where the "
     "budget cannot be kept"),
    (["-d", "demo", "-e", "text_matching", "--dry-run", "--max-cost", "1"], None),
])
def test_cost_options_are_checked_with_one_line_errors(tmp_path, args, message):
    result = CliRunner().invoke(cli, ["run", *args, "--no-progress", "-o", str(tmp_path / "o")],
                                catch_exceptions=False)
    if message is None:  # a dry run of a run without calls: nothing to count, and nothing written
        assert result.exit_code == 0 and "total" in result.output and not (tmp_path / "o").exists()
        return
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [message]
