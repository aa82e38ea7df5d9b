"""The cost ledger's accounting by hand (sonar_core/llm/ledger.py, tokens.py; docs/costs.md)."""

from __future__ import annotations

import threading

import pytest

from sonar_core.errors import BudgetExceeded, ConfigError
from sonar_core.hosts.registry import prices_from
from sonar_core.llm.backends import Answer
from sonar_core.llm.client import LLMClient, LLMRequest
from sonar_core.llm.configs import LLMConfig
from sonar_core.llm.ledger import CostLedger, TokenTally
from sonar_core.llm.requests import SUT_EVENTS, ClientStats
from sonar_core.llm.tokens import Price, estimate_prompt_tokens, estimate_text_tokens, usage_tokens


class _Backend:
    """Answers every call with ``reply`` and the usage given; counts calls."""

    def __init__(self, reply="four words of answer", usage=(10, 4)):
        self.reply, self.usage, self.calls = reply, usage, 0

    def complete(self, messages, temperature, max_tokens, seed):
        self.calls += 1
        meta = {"usage": {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1]}} if self.usage else {}
        return Answer(self.reply, meta)

    def check(self):
        return None

    def close(self):
        return None


def _client(key="j", ledger=None, backend=None, host=False, max_tokens=64):
    config = LLMConfig(key=key, backend="openai", model="m", max_tokens=max_tokens, max_concurrency=1, retries=0)
    client = LLMClient(config, backend=backend or _Backend(), **({"events": SUT_EVENTS} if host else {}))
    client.ledger = ledger
    return client


def _ask(text, **tags):
    return LLMRequest([{"role": "user", "content": text}], tags=tags)


def test_usage_and_estimates_by_hand():
    assert usage_tokens({"usage": {"prompt_tokens": 7, "completion_tokens": 3}}) == (7, 3)
    assert usage_tokens({"input_tokens": 5, "output_tokens": 2}) == (5, 2)  # a rag_http service's fields
    assert usage_tokens({"usage": {"prompt_tokens": True}}) == (None, None)  # a bool is no count
    assert estimate_text_tokens("") == 0 and estimate_text_tokens("abcde") == 2  # ceil(5 / 4)
    # Two messages: ceil(8/4) + 4 and ceil(13/4) + 4.
    assert estimate_prompt_tokens([{"role": "system", "content": "be brief"},
                                   {"role": "user", "content": "What is 2+2?!"}]) == 2 + 4 + 4 + 4
    assert Price(input_per_1k=2, output_per_1k=10).cost(500, 100) == pytest.approx(1.0 + 1.0)
    assert Price(input_per_1k=2).cost(None, None) is None


def test_calls_tokens_and_cost_per_host_judge_and_evaluator():
    ledger = CostLedger({"j": Price(input_per_1k=1.0, output_per_1k=3.0)})
    judge = _client("j", ledger)
    host = _client("h", ledger, _Backend(usage=(20, 5)), host=True)
    judge.complete_many([_ask("a", evaluator="e1"), _ask("b", evaluator="e2"), _ask("c")])
    host.complete_many([_ask("q")])
    record = ledger.record()
    assert record["judges"] == {"j": {"calls": 3, "input_tokens": 30, "output_tokens": 12,
                                      "cost": pytest.approx(3 * (10 / 1000 + 4 * 3 / 1000))}}
    # A host without a price: tokens, and a null cost (never 0).
    assert record["hosts"] == {"h": {"calls": 1, "input_tokens": 20, "output_tokens": 5, "cost": None}}
    # A request without an evaluator tag counts for its judge only.
    assert set(record["evaluators"]) == {"e1", "e2"}
    assert record["evaluators"]["e1"] == {"calls": 1, "input_tokens": 10, "output_tokens": 4,
                                          "cost": pytest.approx(0.022)}
    assert record["total"] == {"calls": 4, "input_tokens": 50, "output_tokens": 17, "cost": pytest.approx(0.066)}
    assert "budget" not in record
    # The clients' own counters.
    assert judge.stats.as_dict()["call_cost"] == pytest.approx(0.066) and host.stats.as_dict()["input_tokens"] == 20
    assert "call_cost" not in host.stats.as_dict()


def test_cached_answers_cost_nothing(tmp_path):
    from sonar_core.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    ledger = CostLedger({"j": Price(input_per_1k=1.0)})
    client = _client("j", ledger)
    client.cache = cache
    client.complete_many([_ask("a")])
    client.complete_many([_ask("a")])
    assert ledger.record()["judges"]["j"]["calls"] == 1 and client.backend.calls == 1
    cache.close()


def test_counters_keep_their_old_shape_without_tokens():
    assert ClientStats(requests=1, fetched=1).as_dict() == {"requests": 1, "cached": 0, "fetched": 1, "failed": 0,
                                                             "retries": 0, "call_seconds": 0.0}
    assert CostLedger().record() is None  # no call, no budget: run.json has no costs


def test_the_budget_refuses_the_call_that_would_pass_it_and_every_later_one():
    # Each call costs 10 * 1 / 1000 + 4 * 1 / 1000 = 0.014 USD; the estimate (from the prompt and the mean
    # output once there is one) is close to that.
    ledger = CostLedger({"j": Price(input_per_1k=1.0, output_per_1k=1.0)}, max_cost=0.05)
    backend = _Backend()
    client = _client("j", ledger, backend, max_tokens=4)
    answers = client.complete_many([_ask(f"question {i} " + "x" * 20) for i in range(6)])
    assert [a.ok for a in answers] == [True, True, True, False, False, False]
    assert backend.calls == 3
    assert ledger.spent == pytest.approx(3 * 0.014)
    assert ledger.stopped.startswith("budget reached: spent $0.0420 of --max-cost $0.0500; the next call (judge 'j'")
    assert "BudgetExceeded: budget reached" in answers[3].error
    assert ledger.record()["budget"] == {"max_cost": 0.05, "spent": pytest.approx(0.042), "stopped": True}
    # Failed by the budget, not cached, and no later call is asked even if it would fit.
    ledger.max_cost = 10.0
    assert not client.complete_many([_ask("another")])[0].ok


def test_a_dry_ledger_counts_estimates_and_answers_placeholders():
    ledger = CostLedger({"j": Price(input_per_1k=1.0, output_per_1k=1.0)}, dry=True)
    backend = _Backend()
    client = _client("j", ledger, backend, max_tokens=10)
    free = client.complete_many([_ask("abcdefgh"), _ask("abcdefgh"), _ask("xyz")])
    labelled = client.complete_many([LLMRequest([{"role": "user", "content": "pass?"}], labels=("pass", "fail"))])
    assert backend.calls == 0  # nothing asked
    assert labelled[0].text == "pass"
    # About 10 tokens (the cap) of 4 characters: round(10 * 4 / len("placeholder ")) = 3 words.
    assert free[0].text.split() == ["placeholder"] * 3
    counts = ledger.estimate_record()
    # The identical request counts once (a real run's cache would answer it); input: ceil(8/4) + 4, ceil(3/4)
    # + 4, ceil(5/4) + 4; output: 10 (the cap, under the default 128) twice and the label's 1.
    assert counts["calls"] == {"j": 3, "total": 3}
    assert counts["tokens"]["j"] == {"input": 6 + 5 + 6, "output": 21}
    assert counts["cost"]["j"] == pytest.approx((17 + 21) / 1000)
    assert counts["kinds"] == {"j": "judge"}


def test_a_resumed_ledger_goes_on_from_the_recorded_costs():
    ledger = CostLedger(max_cost=1.0)
    ledger.resume_from({"hosts": {"h": {"calls": 2, "input_tokens": 3, "output_tokens": 4, "cost": 0.5}},
                        "judges": {}, "evaluators": {}, "budget": {"spent": 0.5}})
    assert ledger.spent == 0.5
    assert ledger.hosts["h"] == TokenTally(2, 3, 4, 0.5, True)


def test_waiting_budgeted_calls_are_released_when_calls_in_flight_settle():
    ledger = CostLedger({"j": Price(input_per_1k=1.0)}, max_cost=0.03)
    client = _client("j", ledger, _Backend(usage=(10, 0)))
    request = _ask("x" * 36)  # estimate: 9 + 4 = 13 input tokens: 0.013 USD; the call costs 0.010
    first = ledger.begin(client, request, {"max_tokens": 0}, "k1")
    second = ledger.begin(client, request, {"max_tokens": 0}, "k2")  # 0.026 reserved
    outcome = {}

    def ask_third():
        try:
            outcome["reservation"] = ledger.begin(client, request, {"max_tokens": 0}, "k3")
        except BudgetExceeded as exc:
            outcome["refused"] = str(exc)

    third = threading.Thread(target=ask_third)
    third.start()
    third.join(0.2)
    assert third.is_alive()  # 0.026 + 0.013 > 0.03: it waits for the calls in flight
    ledger.settle(first, client, 10, 0)
    ledger.settle(second, client, 10, 0)  # spent 0.020: 0.020 + 0.013 > 0.03 still, and nothing in flight
    third.join(2)
    assert not third.is_alive() and "reservation" not in outcome
    assert outcome["refused"] == ledger.stopped == ("budget reached: spent $0.0200 of --max-cost $0.0300; the next "
                                                    "call (judge 'j', about $0.0130) would exceed it")


def test_prices_accept_host_and_judge_keys_and_name_both_kinds():
    prices = prices_from({"h": {"input_per_1k": 1}, "j": {"output_per_1k": 2}}, ["h"], ["j", "k"])
    assert prices == {"h": Price(input_per_1k=1), "j": Price(output_per_1k=2)}
    with pytest.raises(ConfigError) as info:
        prices_from({"x": {}}, ["h"], ["j", "k"])
    assert str(info.value) == "prices: 'x' is neither a host key nor a judge configuration key (hosts: h; judges: j, k)"
