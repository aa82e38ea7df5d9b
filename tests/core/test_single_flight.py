"""Single-flight (issue 25, item 4): identical requests in flight share one call and one outcome, for
judges and for models under test, under injected faults and concurrency; a rerun from the cache equals
the run. The scripted server's call log proves one call per distinct prompt."""

from __future__ import annotations

import json
import threading
from collections import Counter

from judge_server import JudgeServer, write_llm_configs
from sonar_core import api, names
from sonar_core.llm import LLMClient, LLMConfig, LLMRequest, ResponseCache

PROMPTS = ["Is the sky blue?", "Is water wet?", "Is fire cold?"]


class ListJournal:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self._lock = threading.Lock()

    def event(self, message, cls, method, **fields):
        with self._lock:
            self.events.append({"message": message, **fields})

    def count(self, message: str) -> int:
        return sum(e["message"] == message for e in self.events)


def _answered(server: JudgeServer) -> Counter:
    return Counter(c.prompt for c in server.requests if c.outcome == "answered")


def test_identical_requests_of_two_threads_share_one_call_under_429s_and_malformed_answers(tmp_path):
    # Every 2nd call is a 429 (Retry-After 0), every 3rd a malformed body: retried, as every fault is.
    with JudgeServer(default=lambda prompt: f"verdict for {prompt}", latency=0.3, rate_limit_every=2,
                     retry_after="0", malformed_every=3) as server:
        config = LLMConfig(key="j", base_url=server.base_url, model="scripted", timeout=5.0, retries=10,
                           backoff=0.0, max_concurrency=8)
        cache = ResponseCache(tmp_path / "cache.sqlite")
        journal = ListJournal()
        client = LLMClient(config, cache=cache, journal=journal)
        batch = [LLMRequest([{"role": "user", "content": p}], tags={"row": i}) for i in range(4) for p in PROMPTS]
        outcomes: dict[str, list] = {}

        def evaluator(name: str) -> None:  # two evaluators asking the same judge at once
            outcomes[name] = client.complete_many(batch)

        threads = [threading.Thread(target=evaluator, args=(name,)) for name in ("first", "second")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # One answered call per distinct prompt, however many faults the calls met on the way.
        assert _answered(server) == Counter({p: 1 for p in PROMPTS})
        completions = outcomes["first"] + outcomes["second"]
        assert all(c.ok for c in completions)
        assert {p: {c.text for c, r in zip(completions, batch * 2) if r.messages[0]["content"] == p}
                for p in PROMPTS} == {p: {f"verdict for {p}"} for p in PROMPTS}
        # 24 requests: 3 calls, the other 21 answered by a call in flight (or, had it ended, the cache).
        assert client.stats.fetched == 3
        assert client.stats.shared + client.stats.cached == 21
        assert journal.count("using in-flight annotator response") == client.stats.shared > 0
        assert client.stats.as_dict()["shared_calls"] == client.stats.shared
        calls = server.calls
        client.close()

        # A rerun from the cache gives the same answers without a call.
        again = LLMClient(config, cache=cache, journal=ListJournal())
        rerun = again.complete_many(batch)
        assert [c.text for c in rerun] == [c.text for c in outcomes["first"]]
        assert server.calls == calls and all(c.cached for c in rerun)
        again.close()
        cache.close()


def test_a_failure_in_flight_is_one_outcome_for_every_identical_request(tmp_path):
    with JudgeServer(default="yes", latency=0.2, server_error_every=1) as server:
        config = LLMConfig(key="j", base_url=server.base_url, model="scripted", timeout=5.0, retries=1,
                           backoff=0.0, max_concurrency=4)
        client = LLMClient(config, journal=ListJournal())
        completions = client.complete_many([LLMRequest([{"role": "user", "content": "same"}]) for _ in range(4)])
        assert server.calls == 2  # one request and its one retry
        assert {c.error for c in completions} == {completions[0].error} and completions[0].error.startswith(
            "server_error: HTTP 500")
        assert [c.shared for c in completions].count(True) == 3
        assert client.stats.as_dict()["failed"] == 4
        client.close()


def _byop_run(tmp_path, server: JudgeServer, run_id: str):
    # Two models gave the same answer to each question: their BYOP prompts are identical.
    rows = [{"test_case_key": f"t{i}", "model_key": model, "input": f"Question {i}?", "actual_output": f"Answer {i}."}
            for i in range(6) for model in ("m1", "m2")]
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=8, retries=10, backoff=0)
    template = "Is {{ACTUAL_ANSWER}} a fair answer to {{QUESTION}}? Say true or false."
    return api.run(dataset=str(dataset), evaluators=[{"id": "byop", "params": {"prompt_template": template}}],
                   output_dir=str(tmp_path / "out"), run_id=run_id, llm_configs=str(configs),
                   llm_cache=str(tmp_path / "cache.sqlite"), calibrate=False)


def _byop_results(run_dir) -> list:
    folder = next(run_dir.glob("explainer_*Byop*")) if any(run_dir.glob("explainer_*Byop*")) else \
        next(p for p in run_dir.iterdir() if p.name.startswith("explainer_"))
    data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text("utf-8"))
    return data["results"]


def test_a_byop_run_asks_each_identical_prompt_once_and_its_rerun_from_the_cache_equals_it(tmp_path):
    verdicts = lambda prompt: "true" if any(f"Answer {i}." in prompt for i in (0, 2, 4)) else "false"  # noqa: E731
    with JudgeServer(default=verdicts, latency=0.2, rate_limit_every=3, retry_after="0", malformed_every=4) as server:
        first = _byop_run(tmp_path, server, "first")
        assert first.exit_code == 0, first.message
        assert sorted(_answered(server).values()) == [1] * 6  # 12 rows, 6 distinct prompts, 6 answered calls
        calls = server.calls
        journal = [json.loads(line) for line in (first.run_dir / names.JOURNAL).read_text("utf-8").splitlines()]
        shared = sum(e["message"] == "using in-flight annotator response" for e in journal)
        cached = sum(e["message"] == "using cached annotator response" for e in journal)
        assert shared + cached == 6
        second = _byop_run(tmp_path, server, "second")
        assert server.calls == calls  # every answer from the cache
        assert _byop_results(second.run_dir) == _byop_results(first.run_dir)


def test_identical_prompts_to_one_host_share_one_call(tmp_path):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"t{i}", "input": "What is 2 + 2?"}) + "\n"
                             for i in range(4)), encoding="utf-8")
    with JudgeServer(default="4", latency=0.3, rate_limit_every=2, retry_after="0") as server:
        result = api.run(test_suite=str(suite), output_dir=str(tmp_path / "out"), run_id="r",
                         hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                 "max_concurrency": 4, "retries": 5, "backoff": 0}],
                         evaluators=["text_matching"], llm_cache=str(tmp_path / "cache.sqlite"))
        assert _answered(server) == Counter({"What is 2 + 2?": 1})
    rows = json.loads((result.run_dir / names.DATASET_DIR / names.LLM_DATASET_JSON).read_text("utf-8"))
    assert [r["actual_output"] for r in rows] == ["4"] * 4
    journal = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text("utf-8").splitlines()]
    assert sum(e["message"] in ("using in-flight sut response", "using cached sut response") for e in journal) == 3
