"""Epochs: every test case asked N times, reduced per test case and model (docs/epochs.md).

The reducers are checked by hand on a hand-made dataset of 3 epochs, the interval of the mean
reducer against a bootstrap over test cases written here, a deterministic host is asked once for
3 epochs, and ``sonar run --epochs 3`` runs end to end against the scripted server (then resumes).
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from judge_server import JudgeServer
from sonar_core import api
from sonar_core.cli import cli
from sonar_core.contract import Metric
from sonar_core.errors import ConfigError, DatasetError
from sonar_core.findings.epochs import consistency, reduce_values

# Pass (P) or fail (F) of each test case's epochs 0, 1, 2, per model; the rows answer "Paris"
# (contains the expected fact) or "Lyon".
PATTERNS = {
    "a": {"tc1": "PPP", "tc2": "PFP", "tc3": "FFP", "tc4": "FFF"},
    "b": {"tc1": "PPP", "tc2": "PPP", "tc3": "FFF", "tc4": "FPF"},
}
# By hand, per model: the value of each test case under each reducer, then the mean over the 4 cases.
#   a: mean (1 + 2/3 + 1/3 + 0) / 4 = 1/2; majority (1 + 1 + 0 + 0) / 4; pass@k (1 + 1 + 1 + 0) / 4;
#      pass^k (1 + 0 + 0 + 0) / 4
#   b: mean (1 + 1 + 0 + 1/3) / 4 = 7/12; majority (1 + 1 + 0 + 0) / 4; pass@k 3/4; pass^k 2/4
EXPECTED = {
    "mean": {"a": 0.5, "b": 7 / 12},
    "majority": {"a": 0.5, "b": 0.5},
    "pass_at_k": {"a": 0.75, "b": 0.75},
    "pass_hat_k": {"a": 0.25, "b": 0.5},
}
EVALUATOR_DIR = "explainer_sonar_plugins_knowledge_factual_knowledge_FactualKnowledgeEvaluator_*"


def _epoch_dataset(tmp_path: Path) -> Path:
    rows = []
    for epoch in range(3):  # epoch by epoch, as the pipeline writes them
        for case in ("tc1", "tc2", "tc3", "tc4"):
            for model, patterns in PATTERNS.items():
                passed = patterns[case][epoch] == "P"
                rows.append({"key": f"{case}::{model}" + (f"::epoch{epoch}" if epoch else ""), "test_case_key": case,
                             "model_key": model, "epoch": epoch, "input": "Capital of France?",
                             "expected_output": "Paris", "actual_output": "Paris." if passed else "Lyon."})
    path = tmp_path / "epochs.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _run_dataset(tmp_path: Path, reducer: str):
    result = api.run(dataset=_epoch_dataset(tmp_path), evaluators=["factual_knowledge"], epoch_reducer=reducer,
                     output_dir=tmp_path / "reports", run_id=reducer, no_cache=True)
    assert result.exit_code == 0, result.message
    return result.run_dir, next(result.run_dir.glob(EVALUATOR_DIR))


def _board(folder: Path, n: int = 1) -> dict:
    return json.loads((folder / "global_llm_heatmap_leaderboard" / "application_json" / f"leaderboard_{n}.json")
                      .read_text(encoding="utf-8"))


@pytest.mark.parametrize("reducer", ["mean", "majority", "pass_at_k", "pass_hat_k"])
def test_each_reducer_by_hand_on_three_epochs(tmp_path, reducer):
    run_dir, folder = _run_dataset(tmp_path, reducer)
    board = _board(folder)
    for model, value in EXPECTED[reducer].items():
        assert board["data"][model]["factual_knowledge"] == pytest.approx(value, abs=1e-12)
        # Intervals count test cases (4), not rows (12).
        assert board["intervals"][model]["factual_knowledge"]["n"] == 4
        assert board["models"][model]["rows"] == 12
    # Per test case and model: the share of epochs agreeing with the majority verdict.
    assert board["models"]["a"]["consistency"] == pytest.approx((1 + 2 / 3 + 2 / 3 + 1) / 4)
    assert board["models"]["b"]["consistency"] == pytest.approx((1 + 1 + 1 + 2 / 3) / 4)
    index = json.loads((folder / "global_llm_heatmap_leaderboard" / "application_json" / "explanation.json")
                       .read_text(encoding="utf-8"))
    assert index["epochs"] == {"epochs": 3, "reducer": reducer, "verdict_metric": "factual_knowledge",
                               "flaky_test_cases": {"a": 2, "b": 1}, "unscored_test_cases": {}}
    # Every epoch's row is kept, with its epoch.
    results = json.loads((folder / "global_llm_eval_results" / "application_json" / "explanation.json")
                         .read_text(encoding="utf-8"))["results"]
    assert len(results) == 24
    assert {(r["key"], r["epoch"]) for r in results if r["test_case_key"] == "tc2" and r["model_key"] == "a"} == {
        ("tc2::a", 0), ("tc2::a::epoch1", 1), ("tc2::a::epoch2", 2)}
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    # The defaults (one epoch, mean) are left out of run.json; another reducer is recorded.
    assert run["interpretation_parameters"].get("epoch_reducer") == (None if reducer == "mean" else reducer)
    flaky = [i for i in run["result"]["insights"] if i["insight_type"] == "flaky"]
    assert [i["description"] for i in flaky] == [
        "a: 2 flaky test case(s), whose Factual knowledge verdict flips across 3 epochs: tc2 (2 of 3 pass), "
        "tc3 (1 of 3 pass).",
        "b: 1 flaky test case(s), whose Factual knowledge verdict flips across 3 epochs: tc4 (1 of 3 pass).",
    ]
    assert flaky[0]["insight_attrs"]["flaky_test_cases"][1] == {"test_case_key": "tc3", "passes": 1, "epochs": 3,
                                                                "consistency": pytest.approx(2 / 3)}
    table = json.loads((folder / "work" / "epoch_consistency.json").read_text(encoding="utf-8"))
    assert table["columns"] == ["test_case_key", "model", "epochs", "passes", "consistency", "flaky"]
    assert table["rows"][:3] == [["tc2", "a", 3, 2, pytest.approx(2 / 3), "yes"],
                                 ["tc3", "a", 3, 1, pytest.approx(2 / 3), "yes"],
                                 ["tc4", "b", 3, 1, pytest.approx(2 / 3), "yes"]]
    if reducer == "pass_hat_k":
        # Problems count reduced test cases: a fails 3 of its 4 under pass^k.
        problem = next(p for p in run["result"]["problems"]
                       if p["problem_attrs"].get("model_name") == "a" and p["problem_attrs"]["metric_id"] ==
                       "factual_knowledge")
        assert "(3 of 4 test cases on the wrong side)" in problem["description"]
        assert problem["problem_attrs"]["test_case_keys"] == ["tc2", "tc3", "tc4"]


def test_mean_reducer_interval_is_a_bootstrap_over_test_cases(tmp_path):
    _, folder = _run_dataset(tmp_path, "mean")
    board = _board(folder)
    for model, patterns in PATTERNS.items():
        # Independently: each test case's share of passing epochs (dataset order), resampled as Sonar
        # documents its percentile bootstrap (seed 0, 2000 replicates, linear quantiles at 2.5% and 97.5%).
        cases = np.array([patterns[c].count("P") / 3 for c in ("tc1", "tc2", "tc3", "tc4")])
        rng = np.random.default_rng(0)
        means = cases[rng.integers(0, 4, size=(2000, 4))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        entry = board["intervals"][model]["factual_knowledge"]
        assert entry["method"] == "bootstrap" and entry["n"] == 4
        assert entry["ci_low"] == pytest.approx(low, abs=1e-12) and entry["ci_high"] == pytest.approx(high, abs=1e-12)
        # The rows as if independent (12 samples) would give another, narrower interval.
        rows = np.array([1.0 if p == "P" else 0.0 for c in ("tc1", "tc2", "tc3", "tc4") for p in patterns[c]])
        z = 1.959963984540054
        p = rows.mean()
        half = z / (1 + z * z / 12) * math.sqrt(p * (1 - p) / 12 + z * z / (4 * 144))
        assert entry["ci_high"] - entry["ci_low"] > 2 * half


def test_pass_hat_k_interval_is_wilson_over_test_cases(tmp_path):
    _, folder = _run_dataset(tmp_path, "pass_hat_k")
    entry = _board(folder)["intervals"]["a"]["factual_knowledge"]
    # 1 of 4 test cases passes every epoch: Wilson's interval for 1/4, written out.
    z, n, p = 1.959963984540054, 4, 0.25
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert entry["method"] == "wilson" and entry["n"] == 4
    assert entry["ci_low"] == pytest.approx(centre - half) and entry["ci_high"] == pytest.approx(centre + half)


def test_reduce_values_keeps_the_metric_scale_and_its_verdict():
    score = Metric("s", "S", "a score", threshold=0.5)
    lower = Metric("l", "L", "lower is better", higher_is_better=False, threshold=0.5)
    assert reduce_values(score, [0.2, 0.9, 0.6], "pass_hat_k") == 0.2  # the worst epoch
    assert reduce_values(score, [0.2, 0.9, 0.6], "pass_at_k") == 0.9  # the best epoch
    assert reduce_values(score, [0.2, 0.9, 0.6], "majority") == 0.6  # 2 of 3 pass: a passing value
    assert reduce_values(score, [0.2, 0.9], "majority") == 0.2  # a tie fails
    assert reduce_values(score, [0.2, None, float("nan"), 0.6], "mean") == pytest.approx(0.4)  # missing left out
    assert reduce_values(score, [None, None], "mean") is None
    assert reduce_values(lower, [0.2, 0.9, 0.6], "pass_hat_k") == 0.9  # worst of lower-is-better: the highest
    assert reduce_values(lower, [0.2, 0.9, 0.6], "pass_at_k") == 0.2
    assert reduce_values(lower, [0.2, 0.9, 0.6], "majority") == 0.6  # 1 of 3 passes: a failing value
    assert consistency(2, 3) == pytest.approx(2 / 3) and consistency(0, 3) == 1.0 and consistency(1, 2) == 0.5


def test_bad_epoch_settings_and_values_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="'epochs' needs 'test_suite'"):
        api.run(dataset="demo", epochs=3, output_dir=tmp_path)
    with pytest.raises(ConfigError, match="epoch_reducer"):
        api.run(dataset="demo", epoch_reducer="best", output_dir=tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"input": "q", "actual_output": "a", "epoch": -1}]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"row 1, field 'epoch': expected a whole number of at least 0, got -1"):
        api.run(dataset=bad, evaluators=["factual_knowledge"], output_dir=tmp_path)


SUITE = [{"test_case_key": "france", "input": "What is the capital of France?", "expected_output": "Paris"},
         {"test_case_key": "japan", "input": "What is the capital of Japan?", "expected_output": "Tokyo"},
         {"test_case_key": "hamlet", "input": "Who wrote Hamlet?", "expected_output": "Shakespeare"}]


def _cycling(*answers: str):
    """A reply that gives ``answers`` in turn, one per call (a model that samples)."""
    cycle, lock = itertools.cycle(answers), threading.Lock()

    def reply(prompt: str) -> str:
        with lock:
            return next(cycle)
    return reply


@pytest.fixture
def hosts():
    # "sampler" (temperature 0.7) gets Japan right in epochs 0 and 2 only; "greedy" (temperature 0) is
    # deterministic and knows only France.
    with JudgeServer(script=[("France", "Paris."), ("Japan", _cycling("Tokyo.", "Kyoto.", "Tokyo.")),
                             ("Hamlet", "Shakespeare.")], default="?") as sampler, \
            JudgeServer(script=[("France", "Paris")], default="no idea") as greedy:
        yield sampler, greedy


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in SUITE), encoding="utf-8")
    return path


def test_sonar_run_with_three_epochs_end_to_end_then_resumed(tmp_path, hosts):
    sampler, greedy = hosts
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, [
        "run", "--test-suite", str(_suite(tmp_path)), "-e", "factual_knowledge", "--epochs", "3",
        "--epoch-reducer", "pass_hat_k", "--llm-cache", str(tmp_path / "cache.sqlite"), "--no-progress",
        "-o", str(out), "--run-id", "e3",
        "--host", f"{{key: sampler, kind: openai_chat, model: m, base_url: '{sampler.base_url}', temperature: 0.7, "
                  f"max_concurrency: 1}}",
        "--host", f"{{key: greedy, kind: openai_chat, model: m, base_url: '{greedy.base_url}', temperature: 0}}",
    ], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # The sampling host is asked every test case in every epoch; the deterministic one once per test case.
    assert sampler.calls == 9 and greedy.calls == 3
    run_dir = out / "e3"
    rows = json.loads((run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [(r["key"], r["epoch"]) for r in rows[:6]] == [
        ("france::sampler", 0), ("france::greedy", 0), ("japan::sampler", 0), ("japan::greedy", 0),
        ("hamlet::sampler", 0), ("hamlet::greedy", 0)]
    assert [r["key"] for r in rows[6:8]] == ["france::sampler::epoch1", "france::greedy::epoch1"]
    assert [r["actual_output"] for r in rows if r["test_case_key"] == "japan" and r["model_key"] == "sampler"] == [
        "Tokyo.", "Kyoto.", "Tokyo."]
    assert [r["actual_output"] for r in rows if r["model_key"] == "greedy"] == ["Paris", "no idea", "no idea"] * 3
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["interpretation_parameters"]["epochs"] == 3
    assert run["pipeline"]["epochs"]["notes"] == ["greedy: deterministic, asked once, answer reused for 3 epochs"]
    assert run["pipeline"]["hosts"]["greedy"]["reused"] == 6 and run["pipeline"]["hosts"]["greedy"]["fetched"] == 3
    assert run["pipeline"]["hosts"]["sampler"]["fetched"] == 9
    journal = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    reuse = [e for e in journal if e["message"] == "reusing deterministic answers"]
    assert [(e["model_key"], e["note"]) for e in reuse] == [
        ("greedy", "greedy: deterministic, asked once, answer reused for 3 epochs")]
    assert "greedy: deterministic, asked once, answer reused for 3 epochs." in (run_dir / "index.html").read_text(
        encoding="utf-8")
    insights = [i["description"] for i in run["result"]["insights"] if i["insight_type"] == "flaky"]
    assert insights == ["sampler: 1 flaky test case(s), whose Factual knowledge verdict flips across 3 epochs: "
                        "japan (2 of 3 pass)."]
    board = _board(next(run_dir.glob(EVALUATOR_DIR)), 1)
    assert board["data"]["sampler"]["factual_knowledge"] == pytest.approx(2 / 3)  # pass^k: japan fails
    assert board["data"]["greedy"]["factual_knowledge"] == pytest.approx(1 / 3)

    # Resume: epoch 2's answers were never written and the evaluator not run; only they are asked again.
    answers = run_dir / "dataset" / "answers.jsonl"
    kept = [line for line in answers.read_text(encoding="utf-8").splitlines() if json.loads(line).get("epoch", 0) < 2]
    assert len(kept) == 6 + 3  # sampler: epochs 0 and 1; greedy: epoch 0 only
    answers.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    shutil.rmtree(next(run_dir.glob(EVALUATOR_DIR)))
    sampler.reset()
    greedy.reset()
    # Epoch 2 is its own cache entry: ask the server, not the cache.
    (tmp_path / "cache.sqlite").unlink()
    resumed = api.resume(run_dir)
    assert resumed.exit_code == 0, resumed.message
    assert sampler.calls == 3 and greedy.calls == 0
    again = json.loads((run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["key"] for r in again] == [r["key"] for r in rows]


def test_one_epoch_keeps_todays_rows_keys_and_settings(tmp_path, hosts):
    sampler, greedy = hosts
    result = api.run(test_suite=_suite(tmp_path), evaluators=["factual_knowledge"], no_cache=True,
                     output_dir=tmp_path / "out", run_id="one",
                     hosts=[{"key": "sampler", "kind": "openai_chat", "model": "m", "base_url": sampler.base_url,
                             "temperature": 0.7}])
    assert result.exit_code == 0, result.message
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["key"] for r in rows] == ["france::sampler", "japan::sampler", "hamlet::sampler"]
    assert all("epoch" not in r for r in rows)
    answers = (result.run_dir / "dataset" / "answers.jsonl").read_text(encoding="utf-8")
    assert '"epoch"' not in answers
    run = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert "epochs" not in run["interpretation_parameters"] and "epoch_reducer" not in run["interpretation_parameters"]
    assert "epochs" not in run["pipeline"] and "reused" not in run["pipeline"]["hosts"]["sampler"]
    folder = next(result.run_dir.glob(EVALUATOR_DIR))
    assert "epochs" not in json.loads((folder / "global_llm_heatmap_leaderboard" / "application_json" /
                                       "explanation.json").read_text(encoding="utf-8"))
    assert not (folder / "work" / "epoch_consistency.json").exists()


def test_a_conversation_is_asked_turn_by_turn_in_every_epoch(tmp_path):
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}

    def agent(body: dict) -> dict:
        # A tool call first, then an answer quoting the tool's result.
        last = body["messages"][-1]
        return {"role": "assistant", "content": f"Found: {last['content']}"} if last["role"] == "tool" else call

    row = {"test_case_key": "conv", "conversation": [{"role": "user", "content": "Look it up."}],
           "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
           "tool_results": [{"name": "lookup", "arguments": {}, "result": "42"}],
           "expected_tool_calls": [{"name": "lookup", "arguments": {}}]}
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with JudgeServer(message_for=agent) as server:
        result = api.run(test_suite=suite, epochs=2, evaluators=["tool_call_accuracy"], output_dir=tmp_path / "out",
                         llm_cache=str(tmp_path / "c.sqlite"),
                         hosts=[{"key": "agent", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                 "temperature": 0.7, "retries": 0}])
        # Two model turns per conversation, in each of the two epochs (epoch 1 is not epoch 0's cache entry).
        assert server.calls == 4
    assert result.exit_code == 0, result.message
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [(r["key"], r["epoch"], r["actual_output"]) for r in rows] == [
        ("conv::agent", 0, "Found: 42"), ("conv::agent::epoch1", 1, "Found: 42")]
