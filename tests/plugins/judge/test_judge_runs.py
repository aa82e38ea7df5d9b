"""Judge runs as a whole: faults, the response cache across runs, resume after kill -9, secrets,
repeats, a missing judge, and `sonar judges`.

These runs turn calibration off (the scripted judge's verdicts are the subject here, and calibration
asks the judge more questions); a run's calibration is tested in tests/core/test_judge_trust.py."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from sonar_core.errors import ConfigError

from judge_script import GARBAGE, write_dataset, reply
from judge_server import write_llm_configs

JUDGES = ["contact_information", "language_mismatch", "sexism", "stereotypes", "summarization_judge", "byop",
          "fact_check"]


def _folders(run_dir):
    """evaluator id -> its result folder."""
    record = json.loads((run_dir / names.RUN_JSON).read_text())
    return {e["evaluator_id"]: run_dir / e["job_location"] for e in record["result"]["executed_explainers"]}


def _metric_values(run_dir):
    """(evaluator, test case, model) -> every metric value and error message of the run."""
    values = {}
    for evaluator, folder in _folders(run_dir).items():
        descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text())
        keys = [m["key"] for m in descriptor["metrics_meta"]]
        results = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
        for row in results["results"]:
            values[(evaluator, row["test_case_key"], row["model_key"])] = (
                tuple(row[k] for k in keys), row["result_error_message"])
    return values


def _role_counts(run_dir):
    """Per evaluator folder: (rows with a verdict, rows with a parse failure, rows in all)."""
    counts = {}
    for evaluator, folder in _folders(run_dir).items():
        descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text())
        by_role = {m["role"]: m["key"] for m in descriptor["metrics_meta"] if m["role"]}
        rows = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())["results"]
        verdicts = sum(1 for r in rows if r[by_role["pass"]] + r[by_role["fail"]] == 1 and r[by_role["parse_failure"]] == 0)
        parse = sum(1 for r in rows if r[by_role["parse_failure"]] == 1 and r[by_role["pass"]] + r[by_role["fail"]] == 0)
        counts[evaluator] = (verdicts, parse, len(rows))
    return counts


def test_faults_lose_no_row_and_a_second_run_makes_no_call(judge_server, tmp_path):
    """Sequential calls: every 3rd a 429, every 5th malformed, two time out, one is dropped."""
    server = judge_server
    server.default = reply
    server.rate_limit_every, server.retry_after = 3, "0"
    server.malformed_every = 5
    server.timeout_calls, server.timeout_delay = {7, 40}, 3.0
    server.drop_calls = {11}
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, timeout=0.5, retries=6, max_concurrency=1,
                                backoff=0.01)
    dataset = write_dataset(tmp_path / "d.json")
    common = {"dataset": str(dataset), "evaluators": JUDGES, "llm_configs": str(configs), "calibrate": False,
              "llm_cache": str(tmp_path / "cache.sqlite")}
    first = sonar_core.run(output_dir=str(tmp_path / "first"), run_id="r", **common)
    assert first.status == "success", first.message
    outcomes = server.outcomes()
    assert outcomes["answered"] == 84
    assert outcomes["timeout"] == 2 and outcomes["dropped"] == 1
    assert outcomes["rate_limited"] == server.calls // 3
    # Every row has a verdict or a counted parse failure: flaky's three unreadable answers per evaluator.
    assert _role_counts(first.run_dir) == {evaluator: (9, 3, 12) for evaluator in JUDGES}
    values = _metric_values(first.run_dir)
    assert len(values) == 84
    assert all(message.startswith("judge test-judge: expected ") for (_, case, model), (_, message) in values.items()
               if model == "flaky" and case != "t4")

    calls = server.calls
    second = sonar_core.run(output_dir=str(tmp_path / "second"), run_id="r", **common)
    assert second.status == "success"
    assert server.calls == calls  # every answer came from the cache
    assert _metric_values(second.run_dir) == values
    events = [json.loads(line) for line in (second.run_dir / names.JOURNAL).read_text().splitlines()]
    assert sum(e["message"] == "using cached annotator response" for e in events) == 84
    assert not any(e["message"] == "fetched annotator response" for e in events)
    info = next(e for e in events if e["message"] == "cache info")
    assert (info["start_count"], info["end_count"], info["hits"], info["writes"]) == (84, 84, 84, 0)


def test_concurrent_faults_lose_no_row(judge_server, tmp_path):
    server = judge_server
    server.default = reply
    server.rate_limit_every, server.retry_after = 3, "0"
    server.malformed_every = 5
    server.timeout_calls, server.timeout_delay = {4, 30}, 3.0
    server.drop_calls = {9}
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, timeout=0.5, retries=3, max_concurrency=6,
                                backoff=0.01)
    result = sonar_core.run(dataset=str(write_dataset(tmp_path / "d.json")), evaluators=JUDGES,
                            output_dir=str(tmp_path / "out"), run_id="r", llm_configs=str(configs), no_cache=True,
                            calibrate=False)
    assert result.status == "success"
    counts = _role_counts(result.run_dir)
    # A request whose 4 attempts all hit faults becomes a parse failure; it is never dropped.
    assert all(verdicts + parse == rows == 12 and parse >= 3 for verdicts, parse, rows in counts.values()), counts
    for (_, case, model), (_, message) in _metric_values(result.run_dir).items():
        if message.startswith("judge test-judge: judge call failed: "):
            assert message.endswith("(after 4 attempts)")
    assert not (tmp_path / "out" / "r" / "cache.sqlite").exists()


def test_no_cache_and_refresh_cache_ask_again(judge_server, tmp_path):
    server = judge_server
    server.default = reply
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    common = {"dataset": str(write_dataset(tmp_path / "d.json")), "evaluators": ["sexism"], "calibrate": False,
              "llm_configs": str(configs), "llm_cache": str(tmp_path / "cache.sqlite")}
    sonar_core.run(output_dir=str(tmp_path / "a"), **common)
    assert server.calls == 12
    sonar_core.run(output_dir=str(tmp_path / "b"), no_cache=True, **common)
    assert server.calls == 24
    sonar_core.run(output_dir=str(tmp_path / "c"), refresh_cache=True, **common)
    assert server.calls == 36
    sonar_core.run(output_dir=str(tmp_path / "d"), **common)
    assert server.calls == 36
    assert sqlite3.connect(tmp_path / "cache.sqlite").execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 12


def test_kill_9_then_resume_asks_only_for_missing_rows(judge_server, tmp_path, sonar_cli):
    server = judge_server
    server.default = lambda prompt: "present" if "555" in prompt else "absent"
    server.latency = 0.1
    rows = [{"test_case_key": f"t{i:02d}", "model_key": model, "input": f"Q{i}",
             "actual_output": f"Call {model} at 555-01{i:02d}" if model == "m2" else f"Answer {i}"}
            for i in range(20) for model in ("m1", "m2")]
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=2)
    cache = tmp_path / "cache.sqlite"
    args = [sonar_cli, "run", "--no-progress", "--no-calibrate", "-d", str(dataset), "-e", "contact_information", "--llm-configs",
            str(configs), "--llm-cache", str(cache), "--run-id", "r", "-o", str(tmp_path / "out")]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and server.calls < 12 and process.poll() is None:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    run_dir = tmp_path / "out" / "r"
    assert not list(run_dir.glob(f"explainer_*/{names.DONE_MARKER}"))

    db = sqlite3.connect(cache)
    cached_prompts = {json.loads(r[0])["messages"][0]["content"] for r in db.execute("SELECT request FROM responses")}
    db.close()
    assert 10 <= len(cached_prompts) < 40
    before = server.calls
    server.reset()
    resumed = subprocess.run([sonar_cli, "run", "--no-progress", "--resume", str(run_dir)], capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    asked = [c.prompt for c in server.requests]
    assert len(asked) == 40 - len(cached_prompts)
    assert not set(asked) & cached_prompts
    assert len(set(asked) | cached_prompts) == 40
    assert before + len(asked) <= 40 + 2  # at most the two answers in flight at the kill were asked twice
    results = json.loads(next(run_dir.glob("explainer_*")).joinpath(
        names.EVAL_RESULTS, "application_json", "explanation.json").read_text())["results"]
    assert len(results) == 40
    assert {(r["model_key"], r["no_contact_information_leakages"]) for r in results} == {("m1", 1.0), ("m2", 0.0)}


def test_the_api_key_appears_in_no_file_of_the_run(judge_server, tmp_path, monkeypatch, sonar_cli):
    secret = "sk-sonar-test-9f3KqL7mZ2"
    server = judge_server
    server.default = reply
    server.echo_authorization = True  # a hostile endpoint repeats the key in answers and errors
    server.server_error_every = 7
    monkeypatch.setenv("SONAR_TEST_JUDGE_KEY", secret)
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, api_key_env="SONAR_TEST_JUDGE_KEY",
                                retries=0)
    completed = subprocess.run(
        [sonar_cli, "run", "--no-progress", "-d", str(write_dataset(tmp_path / "d.json")), *sum((["-e", j] for j in JUDGES), []),
         "--llm-configs", str(configs), "--llm-cache", str(tmp_path / "cache.sqlite"), "--run-id", "r",
         # The echoing judge fails its calibrations: scored anyway, so that every row keeps its (echoed) answers.
         "-o", str(tmp_path / "out"), "--score-untrusted"], capture_output=True, text=True, timeout=300,
        env=dict(os.environ))
    assert completed.returncode == 0, completed.stderr
    assert all(c.body is not None for c in server.requests)
    run_dir = tmp_path / "out" / "r"
    files = [p for p in run_dir.rglob("*") if p.is_file()] + [tmp_path / "cache.sqlite"]
    assert len(files) > 50
    assert [str(p) for p in files if secret.encode() in p.read_bytes()] == []
    assert secret not in completed.stdout + completed.stderr
    # The key did reach the server, and the run kept the echoes, redacted.
    results = json.loads(next(run_dir.glob("explainer_*ContactInformation*")).joinpath(
        names.EVAL_RESULTS, "application_json", "explanation.json").read_text())["results"]
    assert any("Bearer [REDACTED]" in (r["details"]["judge_answers"][0] or "") for r in results)
    failed = [r["result_error_message"] for r in results if "judge call failed" in r["result_error_message"]]
    assert failed and all("you sent Bearer [REDACTED]" in m for m in failed)
    assert "SONAR_TEST_JUDGE_KEY" in (run_dir / names.RUN_JSON).read_text()


def test_repeats_give_a_majority_and_a_low_agreement_makes_the_judge_unreliable(judge_server, tmp_path):
    server = judge_server
    asked: dict[str, int] = {}

    def wavering(prompt: str) -> str:
        # good's answers pass every time; bad's fail, then pass, then fail: 2 of 3 agree.
        asked[prompt] = asked.get(prompt, 0) + 1
        if "Answer of bad" in prompt:
            return "true" if asked[prompt] == 2 else "false"
        return "true" if "Answer of good" in prompt else GARBAGE

    server.default = wavering
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    result = sonar_core.run(dataset=str(write_dataset(tmp_path / "d.json")),
                            evaluators=[{"id": "sexism", "params": {"judge_repeats": 3}}],
                            output_dir=str(tmp_path / "out"), run_id="r", llm_configs=str(configs),
                            no_cache=True, calibrate=False)
    assert server.calls == 36 and set(asked.values()) == {3}
    folder = next(result.run_dir.glob("explainer_*"))
    rows = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())["results"]
    bad = next(r for r in rows if r["model_key"] == "bad")
    assert (bad["no_sexism"], bad["sexist"], bad["judge_agreement"]) == (1.0, 0.0, pytest.approx(2 / 3))
    assert sorted(bad["details"]["judge_answers"]) == ["false", "false", "true"]
    good = next(r for r in rows if r["model_key"] == "good")
    assert (good["no_sexism"], good["judge_agreement"]) == (0.0, 1.0)
    unreliable = sorted((p["problem_attrs"]["model_name"], p["severity"], p["description"])
                        for p in result.problems if p["problem_type"] == "judge")
    assert unreliable == [
        ("bad", "MEDIUM", "Judge test-judge is unreliable on model bad's answers: repeated judgements agree only 67% "
                          "of the time (minimum 80%)."),
        ("flaky", "HIGH", "Judge test-judge is unreliable on model flaky's answers: no usable answer for 100% of rows "
                          "(limit 50%)."),
    ]


def test_byop_needs_only_the_inputs_its_template_uses(judge_server, tmp_path):
    server = judge_server
    server.default = lambda prompt: "true" if "Reference summary of t1." in prompt else "false"
    rows = [{"test_case_key": "t1", "model_key": "m", "actual_output": "a", "expected_output": "Reference summary of t1."},
            {"test_case_key": "t2", "model_key": "m", "actual_output": "b", "expected_output": ""}]
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    template = "Does {{ACTUAL_ANSWER}} match {{EXPECTED_ANSWER}}? Say true or false."
    result = sonar_core.run(dataset=str(dataset), evaluators=[{"id": "byop", "params": {"prompt_template": template}}],
                            output_dir=str(tmp_path / "out"), run_id="r", llm_configs=str(configs), no_cache=True,
                            calibrate=False)
    assert result.status == "success"
    assert [c.prompt for c in server.requests] == ["Does a match Reference summary of t1.? Say true or false."]
    dataset_problems = [p for p in result.problems if p["problem_type"] == "dataset"]
    assert [p["problem_attrs"]["missing_input"] for p in dataset_problems] == ["expected_answer"]
    with pytest.raises(ConfigError, match="the prompt template uses none of the placeholders"):
        sonar_core.run(dataset=str(dataset), evaluators=[{"id": "byop", "params": {"prompt_template": "Be nice."}}],
                       output_dir=str(tmp_path / "out"), llm_configs=str(configs))


def test_max_rows_scores_whole_test_cases_and_the_report_says_so(judge_server, tmp_path):
    server = judge_server
    server.default = reply
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    result = sonar_core.run(dataset=str(write_dataset(tmp_path / "d.json")),
                            evaluators=[{"id": "contact_information", "max_rows": 7}],
                            output_dir=str(tmp_path / "out"), run_id="r", llm_configs=str(configs), no_cache=True,
                            calibrate=False)
    assert server.calls == 6
    folder = next(result.run_dir.glob("explainer_*"))
    rows = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())["results"]
    assert sorted({r["test_case_key"] for r in rows}) == ["t1", "t2"] and len(rows) == 6
    note = ("Subset: 6 of 12 eligible rows scored (max_rows: 7); whole test cases in dataset order, so the figures "
            "describe only these rows.")
    assert f"> {note}" in (folder / "work" / "report.md").read_text()
    assert f'<p class="note">{note}</p>' in (result.run_dir / names.INDEX_HTML).read_text()
    events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text().splitlines()]
    limited = next(e for e in events if e["message"] == "rows limited")
    assert (limited["rows"], limited["eligible"], limited["max_rows"]) == (6, 12, 7)


def test_a_missing_judge_model_skips_the_evaluator_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))  # an empty model store: no SmolLM2
    monkeypatch.setenv("SONAR_LLM_CONFIGS", str(tmp_path / "none.yaml"))
    dataset = write_dataset(tmp_path / "d.json")
    result = sonar_core.run(dataset=str(dataset), evaluators=["sexism", "looping_detection"],
                            output_dir=str(tmp_path / "out"), run_id="r")
    assert result.status == "success"
    assert result.skipped == [{"evaluator": "sexism", "reason": "judge 'local-smollm2' is not available: model "
                               "'SmolLM2-135M-Instruct' is not available: provide it with `sonar models prepare "
                               "smollm2`"}]
    assert not (tmp_path / "home" / "llm-cache.sqlite").exists()
    strict = CliRunner().invoke(cli, ["run", "--no-progress", "-d", str(dataset), "-e", "sexism", "--strict",
                                      "-o", str(tmp_path / "strict")])
    assert strict.exit_code == 4
    assert "error: evaluator 'sexism' cannot run: judge 'local-smollm2' is not available" in strict.output


def test_unknown_judge_keys_are_configuration_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_LLM_CONFIGS", str(tmp_path / "none.yaml"))
    dataset = write_dataset(tmp_path / "d.json")
    run = CliRunner().invoke(cli, ["run", "-d", str(dataset), "-e", "sexism", "--param",
                                   "sexism.custom_eval_judge_config_key=gpt-9", "-o", str(tmp_path / "out")])
    assert run.exit_code == 2
    assert run.output == ("error: evaluator 'sexism': unknown LLM configuration 'gpt-9' (known: local-smollm2)\n")
    default = CliRunner().invoke(cli, ["run", "-d", str(dataset), "-e", "sexism", "--judge", "gpt-9",
                                       "-o", str(tmp_path / "out")])
    assert default.exit_code == 2 and "unknown LLM configuration 'gpt-9'" in default.output
    assert not (tmp_path / "out").exists()


def test_sonar_judges_lists_and_checks_each_configuration(judge_server, tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))  # local-smollm2 is missing here
    judge_server.script = [("single word OK", "OK")]
    configs = tmp_path / "llm.yaml"
    configs.write_text(f"""
llms:
  test-judge: {{base_url: "{judge_server.base_url}", model: scripted}}
  dead: {{base_url: "http://127.0.0.1:9/v1", model: m, retries: 0, timeout: 2}}
  keyed: {{base_url: "{judge_server.base_url}", model: m, api_key_env: SONAR_UNSET_KEY}}
""", encoding="utf-8")
    monkeypatch.delenv("SONAR_UNSET_KEY", raising=False)
    listing = CliRunner().invoke(cli, ["judges", "--llm-configs", str(configs), "--no-check"])
    assert listing.exit_code == 1  # keyed has no key and local-smollm2 no model, even unchecked
    lines = {line.split("│")[1].strip(): line for line in listing.output.splitlines() if line.startswith("│")}
    assert sorted(lines) == ["dead", "keyed", "local-smollm2", "test-judge"]
    assert "not checked" in lines["test-judge"] and "not checked" in lines["dead"]
    assert "environment variable SONAR_UNSET_KEY" in lines["keyed"]
    assert judge_server.calls == 0
    checked = CliRunner().invoke(cli, ["judges", "--llm-configs", str(configs)])
    assert checked.exit_code == 1
    rows = {line.split("│")[1].strip(): line for line in checked.output.splitlines() if line.startswith("│")}
    assert "answers in" in rows["test-judge"] and "'OK'" in rows["test-judge"]
    assert "no answer: connection" in rows["dead"]
    assert judge_server.calls == 1
    assert "Default judge: local-smollm2" in checked.output
