"""A budget always ends, and Ctrl-C always ends a run (issue 34; sonar_core/llm/budget.py, execution/interrupt.py).

The hang: the robustness demo with a price on its SmolLM2 host and ``--max-cost 0.3`` left two host
threads waiting in ``CostLedger.begin`` for ever. Two calls had reserved 0.038 and 0.0285 USD at the
same time; given back, the float total of what calls in flight reserved was 3.5e-18, not 0, so the
next call, which did not fit, waited for calls that did not exist. SIGINT then left the main thread
joining those threads, and run.json said ``running``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from judge_server import JudgeServer
from sonar_core import names
from sonar_core.errors import BudgetExceeded
from sonar_core.llm.budget import Budget, Reservation
from sonar_core.llm.client import LLMClient, LLMRequest
from sonar_core.llm.configs import LLMConfig
from sonar_core.llm.ledger import CostLedger
from sonar_core.llm.requests import SUT_EVENTS
from sonar_core.llm.tokens import Price
from sonar_core.results import open_run


class _Backend:
    def __init__(self, usage=(10, 0)):
        self.usage, self.calls = usage, 0

    def complete(self, messages, temperature, max_tokens, seed):
        from sonar_core.llm.backends import Answer

        self.calls += 1
        return Answer("an answer", {"usage": {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1]}})

    def check(self):
        return None

    def close(self):
        return None


def _client(ledger, backend=None, cache=None):
    config = LLMConfig(key="h", backend="openai", model="m", max_tokens=16, max_concurrency=1, retries=0)
    client = LLMClient(config, backend=backend or _Backend(), events=SUT_EVENTS, cache=cache)
    client.ledger = ledger
    return client


def _prompt(tokens: int) -> LLMRequest:
    """A request the character rule estimates at ``tokens`` input tokens (4 characters a token, 4 per message)."""
    return LLMRequest([{"role": "user", "content": "x" * (4 * (tokens - 4))}])


def _begin_in_thread(ledger, client, request, key):
    outcome: dict = {}

    def begin():
        try:
            outcome["reservation"] = ledger.begin(client, request, {"max_tokens": 0}, key)
        except BudgetExceeded as exc:
            outcome["refused"] = str(exc)

    thread = threading.Thread(target=begin, daemon=True)
    thread.start()
    return thread, outcome


def test_reservations_given_back_leave_exactly_nothing_in_flight_and_the_next_call_is_refused_at_once():
    # Input only (output_per_1k 0): 76 tokens at 0.5 USD per 1,000 reserve 0.038 USD, 57 tokens 0.0285 USD:
    # the two amounts of the robustness demo's hang.
    ledger = CostLedger({"h": Price(input_per_1k=0.5)}, max_cost=0.1)
    client = _client(ledger)
    first = ledger.begin(client, _prompt(76), {"max_tokens": 0}, "a")
    second = ledger.begin(client, _prompt(57), {"max_tokens": 0}, "b")
    assert (first.amount, second.amount) == (0.038, 0.0285)
    assert ledger.budget.reserved == pytest.approx(0.0665)
    assert 0.038 + 0.0285 - 0.038 - 0.0285 > 0  # what floats left "in flight" before (3.5e-18)
    ledger.settle(first, client, 76, 0)
    ledger.settle(second, client, 57, 0)
    assert ledger.budget.reserved == 0.0 and ledger.budget._reserved == 0  # exactly nothing in flight
    assert ledger.spent == 0.0665
    # The next call (0.038) does not fit (0.1045 > 0.1) and nothing is in flight: refused now, not waited on.
    thread, outcome = _begin_in_thread(ledger, client, _prompt(76), "c")
    thread.join(5)
    assert not thread.is_alive()
    assert outcome == {"refused": "budget reached: spent $0.0665 of --max-cost $0.1000; the next call "
                                  "(host 'h', about $0.0380) would exceed it"}


def test_a_wait_for_calls_in_flight_ends_when_none_settles_within_max_wait():
    ledger = CostLedger({"h": Price(input_per_1k=1.0)}, max_cost=0.03)
    ledger.budget.max_wait = 0.3
    client = _client(ledger)
    ledger.begin(client, _prompt(20), {"max_tokens": 0}, "a")  # 0.020 reserved, never settled
    started = time.monotonic()
    thread, outcome = _begin_in_thread(ledger, client, _prompt(20), "b")
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started >= 0.3
    assert outcome == {"refused": "budget reached: spent $0.0000 of --max-cost $0.0300; the next call (host 'h', "
                                  "about $0.0200) would exceed it with the calls in flight, none of which settled "
                                  "within 0.3 s"}


def test_cancel_wakes_a_waiting_call_and_refuses_every_later_one():
    ledger = CostLedger({"h": Price(input_per_1k=1.0)}, max_cost=0.03)
    client = _client(ledger)
    ledger.begin(client, _prompt(20), {"max_tokens": 0}, "a")  # in flight
    thread, outcome = _begin_in_thread(ledger, client, _prompt(20), "b")
    thread.join(0.3)
    assert thread.is_alive()  # waits for the call in flight (max_wait is 120 s)
    ledger.cancel("run interrupted")
    thread.join(5)
    assert not thread.is_alive()
    refused = outcome["reservation"]
    assert (refused.refused, refused.cancelled, refused.units) == ("run interrupted", True, 0)
    assert ledger.stopped is None  # not the budget's stop
    # Every later call of the run fails at once without asking, with the reason; a run without a budget too.
    for later in (ledger, CostLedger()):
        later.cancel("run interrupted")
        backend = _Backend()
        answer = _client(later, backend).complete("another question")
        assert (answer.ok, answer.error, backend.calls) == (False, "run interrupted (after 1 attempt)", 0)


def test_a_budget_gives_a_reservation_back_once():
    budget = Budget()
    reservation = Reservation("hosts", "h", None, 0.5, units=500_000_000)
    assert budget.reserve(1.0, lambda: reservation, "host 'h'") is reservation
    budget.give_back(reservation, spent_units=400_000_000)
    budget.give_back(reservation)  # a release after the settle takes nothing off again
    assert (budget.reserved, budget.spent) == (0.0, 0.4)


def test_a_call_that_raises_after_its_answer_gives_its_reservation_back(tmp_path):
    from sonar_core.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    cache.put = disk_full  # the answer cannot be stored
    ledger = CostLedger({"h": Price(input_per_1k=1.0)}, max_cost=1.0)
    client = _client(ledger, cache=cache)
    with pytest.raises(OSError):
        client.complete("a question")
    assert ledger.budget.reserved == 0.0  # left reserved, it would hold every waiting call
    cache.close()


# -- whole runs -------------------------------------------------------------------------------------------

def _short_answer(prompt: str) -> str:
    # About as long as SmolLM2's one-sentence answers in the demo (max_tokens 16).
    return "I think the answer to that is well known to most people." + " Indeed." * (len(prompt) % 3)


def _robustness_config(tmp_path: Path, host: JudgeServer) -> Path:
    """configs/robustness.yaml as the issue ran it, priced, with a scripted host in SmolLM2's place (same key)."""
    config = yaml.safe_load((REPO / "configs" / "robustness.yaml").read_text(encoding="utf-8"))
    smollm2 = config["hosts"][0]
    assert smollm2["key"] == "smollm2" and smollm2["kind"] == "hf_causal_lm"
    config["hosts"][0] = {"key": "smollm2", "kind": "openai_chat", "base_url": host.base_url, "model": "smollm2",
                          "temperature": smollm2["temperature"], "max_tokens": smollm2["max_tokens"],
                          "system_prompt": smollm2["system_prompt"], "max_concurrency": 2}
    config["prices"] = {"smollm2": {"input_per_1k": 0.5, "output_per_1k": 1.5}}
    config["test_suite"] = str(REPO / "examples" / "robustness" / "suite.jsonl")
    config["output_dir"] = str(tmp_path / "out")
    config["llm_cache"] = str(tmp_path / "cache.sqlite")
    path = tmp_path / "robustness.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def test_the_priced_robustness_demo_stops_at_its_budget_with_exit_7_within_a_minute(tmp_path, sonar_cli):
    with JudgeServer(default=_short_answer, latency=0.05) as host:
        config = _robustness_config(tmp_path, host)
        run_dir = tmp_path / "out" / "b"
        # The bound the issue asks for: a hang fails here (TimeoutExpired) instead of holding the suite.
        stopped = subprocess.run([sonar_cli, "run", str(config), "--max-cost", "0.3", "--run-id", "b", "--no-progress"],
                                 capture_output=True, text=True, timeout=60)
        assert stopped.returncode == 7, stopped.stderr
        assert stopped.stderr.startswith("error: budget reached: spent $")
        assert f"continue with `sonar run --resume {run_dir} --max-cost <higher>`" in stopped.stderr
        record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
        assert record["status"] == "stopped_by_budget" and record["costs"]["budget"]["stopped"] is True
        assert record["costs"]["budget"]["spent"] <= 0.3
        answered = (run_dir / names.DATASET_DIR / names.ANSWERS_FILE).read_text(encoding="utf-8").splitlines()
        asked_smollm2 = host.calls
        kept = [json.loads(line) for line in answered if json.loads(line)["model_key"] == "smollm2"]
        assert 0 < len(kept) <= asked_smollm2  # finished answers are kept

        resumed = subprocess.run([sonar_cli, "run", "--resume", str(run_dir), "--max-cost", "100", "--no-progress"],
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["status"] == "success" and record["costs"]["budget"]["stopped"] is False
    produced = json.loads((run_dir / names.DATASET_DIR / names.LLM_DATASET_JSON).read_text(encoding="utf-8"))
    assert sum(r["model_key"] == "smollm2" for r in produced) == 20  # 10 questions and their 10 typo copies


def _hang_condition(tmp_path: Path, host: JudgeServer) -> Path:
    """A run in which two host calls reserve 0.038 and 0.0285 USD at once (the hang's amounts), then the
    third does not fit: prompts of 288, 212 and 288 characters are estimated at 76, 57 and 76 input
    tokens (4 characters a token, 4 a message) at 0.5 USD per 1,000 (output free); the server counts
    58 and 43 words, so 0.0505 USD is spent and the third call (0.038) would pass the budget of 0.07."""
    prompts = ["abcd " * 57 + "abc", "abcd " * 42 + "ab", "wxyz " * 57 + "wxy"]
    assert [len(p) for p in prompts] == [288, 212, 288]
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"q{i}", "input": p}) + "\n" for i, p in enumerate(prompts)),
                     encoding="utf-8")
    config = {"test_suite": str(suite), "output_dir": str(tmp_path / "out"), "run_id": "h",
              "llm_cache": str(tmp_path / "cache.sqlite"), "evaluators": ["looping_detection"],
              "hosts": [{"key": "m", "kind": "openai_chat", "base_url": host.base_url, "model": "m",
                         "max_tokens": 16, "max_concurrency": 2}],
              "prices": {"m": {"input_per_1k": 0.5, "output_per_1k": 0.0}}}
    path = tmp_path / "hang.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_the_hang_condition_ends_with_exit_7_and_the_answers_kept(tmp_path, sonar_cli):
    # Before the fix this run waited for ever: 0.038 + 0.0285 - 0.038 - 0.0285 left 3.5e-18 "in flight".
    with JudgeServer(default="Paris", latency=0.5) as host:  # both first calls in flight at once
        config = _hang_condition(tmp_path, host)
        stopped = subprocess.run([sonar_cli, "run", str(config), "--max-cost", "0.07", "--no-progress"],
                                 capture_output=True, text=True, timeout=60)
        assert stopped.returncode == 7, stopped.stderr
        run_dir = tmp_path / "out" / "h"
        assert stopped.stderr == (
            "error: budget reached: spent $0.0505 of --max-cost $0.0700; the next call (host 'm', about $0.0380) "
            f"would exceed it; finished work is kept: continue with `sonar run --resume {run_dir} --max-cost "
            "<higher>`\n")
        assert host.calls == 2
        answers = [json.loads(line) for line in
                   (run_dir / names.DATASET_DIR / names.ANSWERS_FILE).read_text(encoding="utf-8").splitlines()]
        assert sorted(a["test_case_key"] for a in answers) == ["q0", "q1"]
        record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
        assert record["costs"]["budget"] == {"max_cost": 0.07, "spent": 0.0505, "stopped": True}
        # Resumed with a higher budget: only the third question is asked.
        resumed = subprocess.run([sonar_cli, "run", "--resume", str(run_dir), "--max-cost", "0.2", "--no-progress"],
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert host.calls == 3
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["status"] == "success"
    assert record["costs"]["budget"] == {"max_cost": 0.2, "spent": 0.0795, "stopped": False}  # + 58 words


def test_sigint_ends_a_run_waiting_on_its_budget_with_exit_130(tmp_path, sonar_cli):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"q{i}", "input": f"What is {i} plus {i}?"}) + "\n"
                             for i in range(4)), encoding="utf-8")
    # Every answer takes two minutes: the first call stays in flight; the second, which fits the budget
    # only once the first has settled (0.0285 + 0.0285 > 0.05), waits for it.
    with JudgeServer(default="four", latency=120) as host:
        config = {"test_suite": str(suite), "output_dir": str(tmp_path / "out"), "run_id": "w",
                  "llm_cache": str(tmp_path / "cache.sqlite"), "evaluators": ["looping_detection"],
                  "hosts": [{"key": "m", "kind": "openai_chat", "base_url": host.base_url, "model": "m",
                             "max_tokens": 16, "max_concurrency": 2}],
                  "prices": {"m": {"input_per_1k": 0.5, "output_per_1k": 1.5}}}
        (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
        run_dir = tmp_path / "out" / "w"
        process = subprocess.Popen([sonar_cli, "run", str(tmp_path / "run.yaml"), "--max-cost", "0.05",
                                    "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and host.calls < 1:
                time.sleep(0.05)
            assert host.calls == 1, "the first call never arrived"
            time.sleep(1.0)  # the second call is waiting on the budget now
            assert process.poll() is None
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=30)  # promptly: not after the call in flight (120 s)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 130
        assert stderr == (f"error: run interrupted; finished evaluators are kept: continue with "
                          f"`sonar run --resume {run_dir}`\n")
        assert host.calls == 1  # no call started after Ctrl-C
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["status"] == "interrupted"
    assert record["error"] == stderr[len("error: "):].strip()
    events = [json.loads(line)["message"] for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
    assert "run interrupted" in events and "finished run" not in events
    opened = open_run(run_dir)
    assert (opened.status, opened.exit_code, opened.message) == ("interrupted", 130, record["error"])
