"""The host pipeline end to end: a test suite asked of two scripted chat servers, then scored.

Two JudgeServer instances play two models under test with different answers, latencies and
prices; the run writes the produced dataset, journals every item in ModelBench's order, answers a
second run from the response cache, and turns a host that keeps failing into failed items and a
core problem instead of a crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge_server import JudgeServer
from sonar_core import api
from sonar_core.errors import ConfigError, DatasetError

SUITE = [
    {"test_case_key": "france", "input": "What is the capital of France?", "expected_output": "Paris",
     "categories": ["factual"]},
    {"test_case_key": "japan", "input": "What is the capital of Japan?", "expected_output": "Tokyo",
     "categories": ["factual"]},
    {"test_case_key": "hamlet", "input": "Who wrote Hamlet?", "expected_output": "Shakespeare",
     "categories": ["factual"]},
]
# Server "good" knows every answer; server "weak" knows only France (and says so in one word).
GOOD = [("France", "Paris is the capital of France."), ("Japan", "Tokyo."), ("Hamlet", "Shakespeare wrote it.")]
WEAK = [("France", "Paris")]


def _suite(tmp_path: Path, rows=SUITE) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(tmp_path: Path, suite: Path, good: JudgeServer, weak: JudgeServer, **extra) -> dict:
    return {
        "name": "pipe", "test_suite": str(suite), "output_dir": str(tmp_path / "reports"),
        "llm_cache": str(tmp_path / "cache.sqlite"),
        "hosts": [
            {"key": "good", "kind": "openai_chat", "base_url": good.base_url, "model": "good-model",
             "max_concurrency": 4, "retries": 1, "backoff": 0},
            {"key": "weak", "kind": "openai_chat", "base_url": weak.base_url, "model": "weak-model",
             "max_concurrency": 2, "retries": 1, "backoff": 0, "temperature": 0.5},
        ],
        "prices": {"good": {"input_per_1k": 2.0, "output_per_1k": 10.0},
                   "weak": {"input_per_1k": 0.5, "output_per_1k": 1.0}},
        "evaluators": ["factual_knowledge"],
        **extra,
    }


def _journal(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def servers():
    with JudgeServer(script=GOOD, default="unknown", latency=0.05) as good, \
            JudgeServer(script=WEAK, default="no idea") as weak:
        yield good, weak


def test_two_hosts_answer_the_suite_with_costs_durations_and_scores(tmp_path, servers):
    good, weak = servers
    result = api.run(_config(tmp_path, _suite(tmp_path), good, weak))
    assert result.exit_code == 0, result.message
    assert good.calls == 3 and weak.calls == 3
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    # Test case by test case, hosts in configuration order.
    assert [r["key"] for r in rows] == ["france::good", "france::weak", "japan::good", "japan::weak",
                                        "hamlet::good", "hamlet::weak"]
    by_key = {r["key"]: r for r in rows}
    assert by_key["france::good"]["actual_output"] == "Paris is the capital of France."
    assert by_key["japan::weak"]["actual_output"] == "no idea"
    assert by_key["hamlet::good"]["expected_output"] == "Shakespeare"
    assert by_key["hamlet::good"]["categories"] == ["factual"]
    # The server counts words: "What is the capital of France?" is 6 prompt tokens, the answer 6.
    assert by_key["france::good"]["cost"] == pytest.approx(6 / 1000 * 2.0 + 6 / 1000 * 10.0)
    # "Who wrote Hamlet?" 3 tokens, "no idea" 2.
    assert by_key["hamlet::weak"]["cost"] == pytest.approx(3 / 1000 * 0.5 + 2 / 1000 * 1.0)
    # Durations are measured: each call to "good" waits for its 50 ms latency.
    assert all(by_key[f"{case}::good"]["actual_duration"] >= 0.05 for case in ("france", "japan", "hamlet"))
    assert all(r["actual_duration"] > 0 for r in rows)
    # The CSV holds the same rows.
    csv_text = (result.run_dir / "dataset" / "llm_dataset.csv").read_text(encoding="utf-8").splitlines()
    assert csv_text[0].split(",")[:3] == ["key", "input", "expected_output"]
    assert len(csv_text) == 7
    assert json.loads((result.run_dir / "dataset" / "failed_items.json").read_text()) == []
    # Evaluated as today: factual knowledge scores every answered row.
    record = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["result"]["dataset"]["models"] == ["good", "weak"]
    assert record["result"]["dataset"]["shape"][0] == 6
    assert record["pipeline"]["hosts"]["good"] == {"items": 3, "answered": 3, "fetched": 3, "cached": 0,
                                                   "resumed": 0, "failed": 0}
    assert record["pipeline"]["host_settings"]["weak"]["deterministic"] is False
    assert record["pipeline"]["host_settings"]["good"]["deterministic"] is True
    # "weak" knows one answer of three: both factual-knowledge metrics are 1/3, below threshold.
    problems = [p for p in record["result"]["problems"] if p["problem_type"] == "accuracy"]
    assert {p["problem_attrs"]["model_name"] for p in problems} == {"weak"}
    assert [p["problem_attrs"]["metric_score"] for p in problems] == [pytest.approx(1 / 3)] * 2
    html = (result.run_dir / "index.html").read_text(encoding="utf-8")
    assert 'id="host-table"' in html and "<td>good</td>" in html


def test_journal_has_001s_messages_in_order_with_their_fields(tmp_path, servers):
    good, weak = servers
    result = api.run(_config(tmp_path, _suite(tmp_path), good, weak))
    events = _journal(result.run_dir)
    messages = [e["message"] for e in events]
    first = {m: messages.index(m) for m in ("starting run", "running pipeline", "using test items",
                                           "wrote llm dataset", "loaded dataset", "measured item quality",
                                           "finished pipeline", "finished run")}
    assert first["starting run"] < first["running pipeline"] < first["using test items"] \
        < first["wrote llm dataset"] < first["loaded dataset"] < first["measured item quality"] \
        < first["finished pipeline"] < first["finished run"]
    using = events[first["using test items"]]
    assert (using["using"], using["total"]) == (3, 3)
    sut_messages = {"queuing item", "fetched sut response", "using cached sut response", "translated sut response"}
    for case in ("france", "japan", "hamlet"):
        for model in ("good", "weak"):
            item = [e for e in events if e.get("test_case_key") == case and e.get("model_key") == model
                    and e["message"] in sut_messages]
            assert [e["message"] for e in item] == ["queuing item", "fetched sut response", "translated sut response"]
            queued, fetched, translated = item
            assert queued["prompt_text"] == next(r["input"] for r in SUITE if r["test_case_key"] == case)
            assert fetched["run_time"] > 0
            assert fetched["request"]["messages"] == [{"role": "user", "content": queued["prompt_text"]}]
            assert fetched["request"]["model"] == f"{model}-model"
            assert fetched["response"]["text"] == translated["response_text"]
            assert fetched["response"]["meta"]["usage"]["prompt_tokens"] == len(queued["prompt_text"].split())
            # Every SUT event comes before any evaluator scores.
            assert events.index(translated) < first["wrote llm dataset"]
    finished = events[first["finished pipeline"]]
    assert finished["total_finished"] == 6
    assert finished["finished_counts"] == {"good": 3, "weak": 3}
    assert finished["time"] > 0


def test_a_second_run_answers_from_the_cache(tmp_path, servers):
    good, weak = servers
    suite = _suite(tmp_path)
    first = api.run(_config(tmp_path, suite, good, weak))
    assert (good.calls, weak.calls) == (3, 3)
    second = api.run(_config(tmp_path, suite, good, weak))
    assert (good.calls, weak.calls) == (3, 3)  # nothing asked again
    one = json.loads((first.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    two = json.loads((second.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    # Same answers, costs, and the original call's duration.
    assert one == two
    events = _journal(second.run_dir)
    cached = [e for e in events if e["message"] == "using cached sut response"]
    assert len(cached) == 6 and not any(e["message"] == "fetched sut response" for e in events)
    assert {(e["test_case_key"], e["model_key"]) for e in cached} == {
        (c, m) for c in ("france", "japan", "hamlet") for m in ("good", "weak")}
    translated = [e for e in events if e["message"] == "translated sut response"]
    assert all(e["cached"] is True for e in translated)
    record = json.loads((second.run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["pipeline"]["hosts"]["weak"]["cached"] == 3
    assert record["pipeline"]["hosts"]["weak"]["fetched"] == 0
    # factual_knowledge asks no judge: the cache served models under test only.
    infos = [(e["type"], e["start_count"], e["end_count"], e["hits"], e["writes"])
             for e in _journal(first.run_dir) + events if e["message"] == "cache info"]
    assert infos == [("sut", 0, 6, 0, 6), ("sut", 6, 6, 6, 0)]


def test_a_host_that_keeps_failing_gives_failed_items_and_a_core_problem(tmp_path, servers):
    good, weak = servers
    weak.server_error_every = 1  # every call to "weak" is a 500
    result = api.run(_config(tmp_path, _suite(tmp_path), good, weak))
    assert result.exit_code == 0, result.message
    assert weak.calls == 6  # each item tried twice (retries: 1)
    failed = json.loads((result.run_dir / "dataset" / "failed_items.json").read_text(encoding="utf-8"))
    assert [(f["test_case_key"], f["model_key"]) for f in failed] == [("france", "weak"), ("japan", "weak"),
                                                                      ("hamlet", "weak")]
    assert failed[0]["error"] == ('server_error: HTTP 500: {"error": {"message": "internal error", "type": "test"}} '
                                  "(after 2 attempts)")
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["model_key"] for r in rows] == ["good", "good", "good"]
    host_problems = [p for p in result.problems if p["problem_type"] == "reliability"]
    assert len(host_problems) == 1
    problem = host_problems[0]
    assert problem["severity"] == "HIGH"
    assert problem["description"] == ("Host weak: 3 of 3 items failed and were not scored; first error: "
                                      + failed[0]["error"])
    assert problem["problem_attrs"]["test_case_keys"] == ["france", "japan", "hamlet"]
    record = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["pipeline"]["hosts"]["weak"]["failed"] == 3
    assert record["pipeline"]["failed_items"] == 3
    assert record["result"]["overall_result"]["high_severity_problems"] >= 1
    assert problem in record["result"]["problems"]
    events = _journal(result.run_dir)
    assert sum(e["message"] == "sut request failed" for e in events) == 3
    assert sum(e["message"] == "retrying sut request" for e in events) == 3
    html = (result.run_dir / "index.html").read_text(encoding="utf-8")
    assert "Host weak: 3 of 3 items failed" in html


def test_rag_host_contexts_become_the_rows_retrieved_context(tmp_path):
    chunks = {"France": ["Paris is the capital and largest city of France."], "Japan": ["Tokyo is in Japan."]}
    with JudgeServer(script=[("France", "Paris."), ("Japan", "Tokyo.")], default="?",
                     rag_contexts=lambda q: next((v for k, v in chunks.items() if k in q), [])) as rag:
        config = {
            "name": "rag", "test_suite": str(_suite(tmp_path, SUITE[:2])), "output_dir": str(tmp_path / "r"),
            "no_cache": True, "evaluators": ["factual_knowledge"],
            "hosts": [{"key": "rag", "kind": "rag_http", "url": rag.base_url + "/rag"}],
            "prices": {"rag": {"input_per_1k": 1.0, "output_per_1k": 1.0}},
        }
        result = api.run(config)
        assert rag.calls == 2
        # The contract's body, one request per test case (they arrive concurrently, in any order).
        assert sorted((c.body for c in rag.requests), key=str) == [
            {"question": "What is the capital of France?"}, {"question": "What is the capital of Japan?"}]
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["context"] for r in rows] == [chunks["France"], chunks["Japan"]]
    assert [r["actual_output"] for r in rows] == ["Paris.", "Tokyo."]
    assert rows[0]["cost"] == pytest.approx((6 + 1) / 1000)


def _python_host_run(tmp_path: Path, monkeypatch, module: str, source: str, key: str, suite=SUITE,
                     host: dict | None = None, **extra) -> dict:
    """A run configuration whose one host is ``module:answer`` (``source`` written to ``tmp_path``)."""
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return {"name": key, "test_suite": str(_suite(tmp_path, suite)), "output_dir": str(tmp_path / "r"),
            "llm_cache": str(tmp_path / "cache.sqlite"), "evaluators": ["factual_knowledge"],
            "hosts": [{"key": key, "kind": "python", "callable": f"{module}:answer", **(host or {})}], **extra}


def _produced(result) -> list[dict]:
    return json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))


def test_python_host_and_its_failures(tmp_path, monkeypatch):
    config = _python_host_run(tmp_path, monkeypatch, "my_sut", "def answer(prompt):\n"
                              "    if 'Hamlet' in prompt:\n"
                              "        raise ValueError('no idea about plays')\n"
                              "    return {'answer': prompt.upper(), 'contexts': ['c1']}\n", "py")
    result = api.run(config)
    rows = _produced(result)
    assert [(r["test_case_key"], r["actual_output"], r["context"]) for r in rows] == [
        ("france", "WHAT IS THE CAPITAL OF FRANCE?", ["c1"]), ("japan", "WHAT IS THE CAPITAL OF JAPAN?", ["c1"])]
    failed = json.loads((result.run_dir / "dataset" / "failed_items.json").read_text(encoding="utf-8"))
    assert failed == [{"test_case_key": "hamlet", "model_key": "py",
                       "error": "my_sut:answer raised ValueError: no idea about plays (after 1 attempt)"}]
    assert [p["severity"] for p in result.problems if p["problem_type"] == "reliability"] == ["MEDIUM"]


def test_the_demo_lookup_host_is_fragile_to_typos_in_keywords():
    from sonar_core.demo.lookup_host import FALLBACK, answer

    assert answer("What is the capital of France?") == "The capital of France is Paris."
    assert answer("what is THE capital of france") == "The capital of France is Paris."
    assert answer("What is the captial of France?") == FALLBACK
    assert answer("What is the capital of Frnace?") == FALLBACK
    assert answer("Waht is the capital of France?") == "The capital of France is Paris."


@pytest.mark.parametrize("hosts, prices, message", [
    ([{"key": "a", "kind": "telepathy"}], {},
     "hosts[0] (key 'a'): unknown host kind 'telepathy' (known: hf_causal_lm, openai_chat, python, rag_http)"),
    ([{"key": "a", "kind": "python", "callable": "m:f", "temprature": 1}], {},
     "hosts[0] (key 'a'): unknown setting 'temprature'"),
    ([{"key": "a", "kind": "openai_chat"}], {}, "hosts[0] (key 'a'): missing required setting 'model'"),
    ([{"key": "a", "kind": "python", "callable": "no_such_module_here:f"}], {},
     "hosts[0] (key 'a'): cannot import module 'no_such_module_here' of callable 'no_such_module_here:f': "
     "ModuleNotFoundError: No module named 'no_such_module_here'"),
    ([{"key": "a", "kind": "python", "callable": "json:nope"}], {},
     "hosts[0] (key 'a'): module 'json' has no function 'nope' (callable 'json:nope')"),
    ([{"key": "a", "kind": "python", "callable": "json:dumps"}, {"key": "a", "kind": "python", "callable": "json:dumps"}],
     {}, "hosts[1] (key 'a'): another host has the key 'a'"),
    ([{"key": "a", "kind": "python", "callable": "json:dumps"}], {"b": {"input_per_1k": 1}},
     "prices: 'b' is neither a host key nor a judge configuration key (hosts: a; judges: local-smollm2)"),
    ([{"key": "a", "kind": "python", "callable": "json:dumps"}], {"a": {"input_per_1k": -1}},
     "prices.a: setting 'input_per_1k': Input should be greater than or equal to 0"),
])
def test_host_configuration_errors_are_one_line(tmp_path, hosts, prices, message):
    config = {"test_suite": str(_suite(tmp_path)), "output_dir": str(tmp_path / "r"), "hosts": hosts,
              "prices": prices, "no_cache": True}
    with pytest.raises(ConfigError) as info:
        api.run(config)
    assert str(info.value) == message
    assert not (tmp_path / "r").exists()  # nothing written before the configuration is right


def test_suite_and_source_configuration_errors(tmp_path):
    suite = _suite(tmp_path)
    with pytest.raises(ConfigError, match=r"^<config>: 'test_suite' needs 'hosts' \(the models to ask\)$"):
        api.run({"test_suite": str(suite)})
    with pytest.raises(ConfigError, match=r"^<config>: 'dataset' and 'test_suite' exclude each other$"):
        api.run({"test_suite": str(suite), "dataset": "demo",
                 "hosts": [{"key": "a", "kind": "python", "callable": "json:dumps"}]})
    duplicate = _suite(tmp_path, [SUITE[0], {**SUITE[1], "test_case_key": "france"}])
    with pytest.raises(DatasetError) as info:
        api.run({"test_suite": str(duplicate), "hosts": [{"key": "a", "kind": "python", "callable": "json:dumps"}]})
    assert str(info.value) == f"{duplicate}: line 2, field 'key': duplicate key 'france::model' (first at line 1)"


def test_the_robustness_demo_configuration_runs_its_lookup_host(tmp_path):
    import yaml

    from conftest import REPO

    path = REPO / "configs" / "robustness.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [h["kind"] for h in data["hosts"]] == ["hf_causal_lm", "python"]
    assert data["hosts"][0]["temperature"] > 0
    # SmolLM2 is left out here (slow on a CPU, and perhaps not prepared); the lookup host is the config's own.
    lookup = [h for h in data["hosts"] if h["kind"] == "python"]
    result = api.run(path, hosts=lookup, prices={}, output_dir=str(tmp_path), no_cache=True)
    assert result.exit_code == 0, result.message
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    originals = [r for r in rows if not r["original_test_case_key"]]
    copies = [r for r in rows if r["original_test_case_key"]]
    assert len(originals) == 10 and len(copies) == 10 and {r["model_key"] for r in rows} == {"lookup"}
    # The lookup table knows every question of the suite as asked.
    assert all(r["actual_output"] != "I believe the answer is 42." for r in originals)
    # perturb: gives each question a butter_finger copy; where a typo hits a keyword the lookup falls back
    # to its wrong answer, and factual knowledge reports that flip.
    broken = {r["original_test_case_key"] for r in copies if r["actual_output"] == "I believe the answer is 42."}
    flips = {p["problem_attrs"]["original_test_case_key"] for p in result.problems
             if p["evaluator_id"] == "factual_knowledge" and "original_test_case_key" in p["problem_attrs"]}
    assert broken and flips == broken


def test_cli_test_suite_and_host_flags(tmp_path, sonar_cli):
    import subprocess

    suite = _suite(tmp_path, SUITE[:1])
    done = subprocess.run([sonar_cli, "run", "--test-suite", str(suite), "--host",
                           "{key: py, kind: python, callable: 'json:dumps'}", "-e", "looping_detection",
                           "-o", str(tmp_path / "r"), "--run-id", "cli", "--no-cache", "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "r" / "cli" / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [(r["model_key"], r["actual_output"]) for r in rows] == [("py", '"What is the capital of France?"')]
    bad = subprocess.run([sonar_cli, "run", "--test-suite", str(suite), "--host", "[1, 2]"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("error: --host '[1, 2]': expected a YAML mapping such as "
                                  "'{key: m, kind: python, callable: mod:fn}'")


def test_a_perturbator_from_a_run_plugin_module_makes_perturb_copies(tmp_path, monkeypatch):
    """``plugins:`` (the CLI's ``-p``) modules register perturbators for the run's ``perturb:`` too."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    config = _python_host_run(tmp_path, monkeypatch, "echo_sut", "def answer(prompt):\n    return prompt\n", "echo",
                              suite=SUITE[:1], plugins=["reverse_perturbator_plugin"],
                              perturb=[{"perturbator": "reverse"}])
    result = api.run(config)
    assert result.status == "success", result.message
    assert [(r["test_case_key"], r["actual_output"], r.get("perturbation")) for r in _produced(result)] == [
        ("france", "What is the capital of France?", ""),
        ("france~reverse", "?ecnarF fo latipac eht si tahW", "reverse")]
    with pytest.raises(ConfigError, match=r"^perturb\[0\]: unknown perturbator 'reverse' \(known: "):
        api.run({**config, "plugins": [], "output_dir": str(tmp_path / "r2")})


def test_a_python_host_that_hangs_fails_its_item_at_the_timeout(tmp_path, monkeypatch):
    config = _python_host_run(tmp_path, monkeypatch, "slow_sut", "import time\n"
                              "def answer(prompt):\n"
                              "    if 'Japan' in prompt:\n"
                              "        time.sleep(5)\n"
                              "    return 'fine'\n", "slow", host={"timeout": 0.3})
    result = api.run(config)
    assert [(r["test_case_key"], r["actual_output"]) for r in _produced(result)] == [("france", "fine"),
                                                                                      ("hamlet", "fine")]
    failed = json.loads((result.run_dir / "dataset" / "failed_items.json").read_text(encoding="utf-8"))
    assert failed == [{"test_case_key": "japan", "model_key": "slow",
                       "error": "timeout: slow_sut:answer did not return within 0.3 s (after 1 attempt)"}]
