"""The LLM client: pacing, retries, Retry-After, faults, the cache and the journal, against a real server."""

from __future__ import annotations

import json
import sqlite3
from email.utils import formatdate

import pytest

from sonar_core.llm import LLMClient, LLMConfig, LLMRequest, RateLimiter, ResponseCache, RetryPolicy
from sonar_core.llm.rate_limit import retry_after_seconds
from sonar_core.llm.secrets import REDACTED


class FakeTime:
    """A clock that moves only when someone sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


class ListJournal:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def event(self, message, cls, method, **fields):
        self.events.append({"message": message, **fields})

    def messages(self) -> list[str]:
        return [e["message"] for e in self.events]


def _config(server, **overrides) -> LLMConfig:
    settings = {"key": "test-judge", "base_url": server.base_url, "model": "scripted", "timeout": 2.0,
                "retries": 5, "max_concurrency": 1}
    return LLMConfig(**{**settings, **overrides})


def _ask(text: str, **tags) -> LLMRequest:
    return LLMRequest([{"role": "user", "content": text}], tags=tags)


def test_rate_limiter_spaces_requests_evenly():
    fake = FakeTime()
    limiter = RateLimiter(120, clock=fake.clock, sleep=fake.sleep)  # one every 0.5 s
    assert [limiter.acquire() for _ in range(4)] == [0.0, 0.5, 0.5, 0.5]
    assert fake.sleeps == [0.5, 0.5, 0.5]
    fake.now += 10  # idle time is not saved up for a burst
    assert [limiter.acquire() for _ in range(2)] == [0.0, 0.5]


@pytest.mark.parametrize("headers, seconds", [
    ({"Retry-After": "2"}, 2.0),
    ({"retry-after": "0.25"}, 0.25),
    ({"retry-after-ms": "150", "Retry-After": "9"}, 0.15),
    ({"Retry-After": formatdate(1_000_030.0, usegmt=True)}, 30.0),
    ({"Retry-After": "soon"}, None),
    ({}, None),
])
def test_retry_after_header_is_read(headers, seconds):
    assert retry_after_seconds(headers, now=lambda: 1_000_000.0) == seconds


def test_backoff_is_exponential_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(base=0.5, cap=4.0)
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (9, 4.0)):
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays) and len(delays) > 1
    assert policy.delay(3, retry_after=7.0) == 7.0
    assert RetryPolicy(max_retry_after=60).delay(1, retry_after=600.0) == 60.0


def test_every_fault_is_retried_until_each_request_is_answered(judge_server, tmp_path):
    """Sequential calls make the server's call numbers, and so each fault, land exactly as listed."""
    server = judge_server
    server.script = [("Q5", "five")]
    server.default = "ok"
    server.rate_limit_every, server.retry_after = 3, "0"
    server.malformed_every = 5
    server.timeout_calls, server.timeout_delay = {7}, 3.0
    server.drop_calls = {11}
    fake, journal = FakeTime(), ListJournal()
    client = LLMClient(_config(server, timeout=0.5), cache=ResponseCache(tmp_path / "c.sqlite"), journal=journal,
                       retry_policy=RetryPolicy(base=0.01), sleep=fake.sleep, clock=fake.clock)
    answers = client.complete_many([_ask(f"Q{i}", test_case_key=f"t{i}") for i in range(1, 11)])
    assert [a.text for a in answers] == ["ok"] * 4 + ["five"] + ["ok"] * 5
    assert [a.attempts for a in answers] == [1, 1, 2, 4, 5, 1, 2, 1, 2, 3]
    # calls: 3 429, 5 malformed, 6 429, 7 timeout, 9 429, 10 malformed, 11 dropped, 12 429, 15 429,
    # 18 429, 20 malformed, 21 429; the other 10 are answers.
    assert server.calls == 22
    assert server.outcomes() == {"answered": 10, "rate_limited": 7, "malformed": 3, "timeout": 1, "dropped": 1}
    assert [c.n for c in server.requests if c.outcome == "rate_limited"] == [3, 6, 9, 12, 15, 18, 21]
    # Tokens are the server's usage (whitespace words): one-word prompts and answers, ten answered calls.
    assert client.stats.as_dict() | {"call_seconds": 0} == {"requests": 10, "cached": 0, "fetched": 10, "failed": 0,
                                                             "retries": 12, "call_seconds": 0, "input_tokens": 10,
                                                             "output_tokens": 10}
    retries = [e for e in journal.events if e["message"] == "retrying annotator request"]
    assert [(e["test_case_key"], e["attempt"], e["reason"].split(":")[0]) for e in retries] == [
        ("t3", 1, "rate_limit"), ("t4", 1, "malformed"), ("t4", 2, "rate_limit"), ("t4", 3, "timeout"),
        ("t5", 1, "rate_limit"), ("t5", 2, "malformed"), ("t5", 3, "connection"), ("t5", 4, "rate_limit"),
        ("t7", 1, "rate_limit"), ("t9", 1, "rate_limit"), ("t10", 1, "malformed"), ("t10", 2, "rate_limit")]
    assert retries[1]["reason"] == ("malformed: malformed response body: "
                                    "'{\"id\": \"chatcmpl-broken\", \"choices\": [{\"message\": '")
    assert retries[3]["reason"] == "timeout: no answer within 0.5 s"
    fetched = [e for e in journal.events if e["message"] == "fetched annotator response"]
    assert len(fetched) == 10 and fetched[4]["response"] == "five" and fetched[4]["attempts"] == 5
    assert fetched[4]["request"] == {"model": "scripted", "messages": [{"role": "user", "content": "Q5"}],
                                     "temperature": 0.0, "max_tokens": 256, "repeat": 0}
    assert fetched[4]["annotator"] == "test-judge" and fetched[4]["test_case_key"] == "t5"


def test_retry_after_pauses_the_client_for_exactly_that_long(judge_server):
    server = judge_server
    server.rate_limit_every, server.retry_after = 2, "3"
    fake = FakeTime()
    client = LLMClient(_config(server), retry_policy=RetryPolicy(base=0.01), sleep=fake.sleep, clock=fake.clock)
    answers = client.complete_many([_ask("a"), _ask("b"), _ask("c")])
    assert [a.text for a in answers] == ["true"] * 3
    assert fake.sleeps == [3.0, 3.0]  # calls 2 and 4 were 429s; nothing else waited


def test_retry_after_in_milliseconds_and_as_a_date(judge_server):
    server = judge_server
    server.rate_limit_every, server.retry_after = 2, formatdate(4_102_444_800.0, usegmt=True)  # 2100-01-01
    fake = FakeTime()
    client = LLMClient(_config(server), retry_policy=RetryPolicy(max_retry_after=45.0), sleep=fake.sleep,
                       clock=fake.clock)
    assert client.complete_many([_ask("a"), _ask("b")])[1].text == "true"
    assert fake.sleeps == [45.0]  # a far date is capped


def test_a_request_that_keeps_failing_comes_back_with_its_error_and_is_not_cached(judge_server, tmp_path):
    server = judge_server
    server.server_error_every = 1
    fake, journal = FakeTime(), ListJournal()
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = LLMClient(_config(server, retries=2), cache=cache, journal=journal,
                       retry_policy=RetryPolicy(base=1.0, cap=8.0), sleep=fake.sleep, clock=fake.clock)
    answer = client.complete("Is it?", test_case_key="t1")
    assert answer.text is None and answer.attempts == 3
    assert answer.error == ('server_error: HTTP 500: {"error": {"message": "internal error", "type": "test"}} '
                            '(after 3 attempts)')
    assert server.calls == 3 and cache.count() == 0
    assert len(fake.sleeps) == 2 and 0.5 <= fake.sleeps[0] <= 1.0 and 1.0 <= fake.sleeps[1] <= 2.0
    assert journal.messages() == ["retrying annotator request", "retrying annotator request",
                                  "annotator request failed"]
    server.server_error_every = None
    assert client.complete("Is it?").text == "true" and server.calls == 4


def test_a_client_error_is_not_retried(judge_server):
    server = judge_server
    client = LLMClient(_config(server, base_url=server.base_url + "/wrong"), sleep=lambda s: None)
    answer = client.complete("Is it?")
    assert answer.attempts == 1 and server.calls == 0
    assert answer.error.startswith("HTTP 404: ")


def test_cached_answers_need_no_call_and_repeats_are_kept_apart(judge_server, tmp_path):
    server = judge_server
    server.default = lambda prompt: f"answer {len(server.requests)}"
    journal = ListJournal()
    client = LLMClient(_config(server), cache=ResponseCache(tmp_path / "c.sqlite"), journal=journal)
    first = client.complete_many([LLMRequest([{"role": "user", "content": "Q"}], repeat=r) for r in range(3)])
    assert [a.text for a in first] == ["answer 1", "answer 2", "answer 3"] and server.calls == 3
    again = LLMClient(_config(server), cache=ResponseCache(tmp_path / "c.sqlite"), journal=journal)
    second = again.complete_many([LLMRequest([{"role": "user", "content": "Q"}], repeat=r) for r in range(3)])
    assert [a.text for a in second] == ["answer 1", "answer 2", "answer 3"] and all(a.cached for a in second)
    assert server.calls == 3
    cached = [e for e in journal.events if e["message"] == "using cached annotator response"]
    assert [(e["request"]["repeat"], e["response"]) for e in cached] == [(0, "answer 1"), (1, "answer 2"),
                                                                         (2, "answer 3")]
    # A lower per-request token cap is a different request.
    assert again.complete_many([LLMRequest([{"role": "user", "content": "Q"}], max_tokens=5)])[0].text == "answer 4"
    assert server.requests[-1].body["max_tokens"] == 5


def test_concurrency_is_bounded_by_the_configuration(judge_server):
    server = judge_server
    server.latency = 0.2
    client = LLMClient(_config(server, max_concurrency=3))
    answers = client.complete_many([_ask(f"Q{i}") for i in range(12)])
    assert [a.text for a in answers] == ["true"] * 12
    assert server.max_in_flight == 3
    client.close()


def test_rate_limit_paces_request_starts(judge_server):
    server = judge_server
    fake = FakeTime()
    client = LLMClient(_config(server, requests_per_minute=30), sleep=fake.sleep, clock=fake.clock)
    client.complete_many([_ask(f"Q{i}") for i in range(4)])
    assert fake.sleeps == [2.0, 2.0, 2.0]


def test_an_echoed_api_key_is_redacted_everywhere_it_would_be_kept(judge_server, tmp_path, monkeypatch):
    server = judge_server
    server.echo_authorization = True
    monkeypatch.setenv("SONAR_TEST_KEY", "sk-test-5eCr3t-value")
    journal = ListJournal()
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = LLMClient(_config(server, api_key_env="SONAR_TEST_KEY"), api_key="sk-test-5eCr3t-value", cache=cache,
                       journal=journal)
    assert client.complete("Q").text == f"true Bearer {REDACTED}"
    assert server.requests[0].body["model"] == "scripted"
    server.server_error_every = 1
    failed = LLMClient(_config(server, retries=0), api_key="sk-test-5eCr3t-value", journal=journal).complete("Q2")
    assert REDACTED in failed.error and "5eCr3t" not in failed.error
    dump = json.dumps(journal.events) + json.dumps(sqlite3.connect(tmp_path / "c.sqlite").execute(
        "SELECT * FROM responses").fetchall())
    assert "5eCr3t" not in dump and REDACTED in dump


def test_ping_bypasses_the_cache(judge_server, tmp_path):
    server = judge_server
    server.script = [("single word OK", "OK")]
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = LLMClient(_config(server), cache=cache)
    assert client.ping().text == "OK" and client.ping().text == "OK"
    assert server.calls == 2 and cache.count() == 0 and server.requests[0].body["max_tokens"] == 5


def _counting(prefix: str):
    """A reply that numbers its answers, so each choice of a call is told apart."""
    count = iter(range(1, 1000))
    return lambda prompt: f"{prefix} {next(count)}"


def test_choices_are_one_call_with_n_and_each_its_own_cache_entry(judge_server, tmp_path):
    judge_server.default = _counting("answer")
    journal = ListJournal()
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = LLMClient(_config(judge_server), cache=cache, journal=journal)
    answers = client.complete_choices(_ask("Q", evaluator="e"), 3)
    assert [a.text for a in answers] == ["answer 1", "answer 2", "answer 3"]
    assert [(c.choices, c.outcome) for c in judge_server.requests] == [(3, "answered")]
    assert judge_server.requests[0].body["n"] == 3
    fetched = [e for e in journal.events if e["message"] == "fetched annotator response"]
    assert [(e["request"]["repeat"], e["response"], e["choices"], e["evaluator"]) for e in fetched] == [
        (0, "answer 1", 3, "e"), (1, "answer 2", 3, "e"), (2, "answer 3", 3, "e")]
    # One call: its usage once (a one-word prompt; three two-word answers), not once per choice.
    assert client.stats.as_dict() | {"call_seconds": 0} == {"requests": 3, "cached": 0, "fetched": 3, "failed": 0,
                                                            "retries": 0, "call_seconds": 0, "input_tokens": 1,
                                                            "output_tokens": 6}
    # The entries are those of the single requests repeat 0..2: complete_many reads them back.
    again = client.complete_many([LLMRequest(_ask("Q").messages, repeat=r) for r in range(3)])
    assert [(a.text, a.cached) for a in again] == [("answer 1", True), ("answer 2", True), ("answer 3", True)]
    assert judge_server.calls == 1


def test_only_the_choices_not_cached_are_asked_for(judge_server, tmp_path):
    judge_server.default = _counting("a")
    client = LLMClient(_config(judge_server), cache=ResponseCache(tmp_path / "c.sqlite"))
    assert client.complete_many([LLMRequest(_ask("Q").messages, repeat=1)])[0].text == "a 1"
    answers = client.complete_choices(_ask("Q"), 3)
    assert [(a.text, a.cached) for a in answers] == [("a 2", False), ("a 1", True), ("a 3", False)]
    assert [c.choices for c in judge_server.requests] == [1, 2]
    # Two of four missing: one more call. One missing: a plain call without n.
    assert [a.text for a in client.complete_choices(_ask("Q"), 4)] == ["a 2", "a 1", "a 3", "a 4"]
    assert [c.choices for c in judge_server.requests] == [1, 2, 1]
    assert "n" not in judge_server.requests[-1].body


def test_a_failed_choices_call_fails_every_answer_and_caches_none(judge_server, tmp_path):
    judge_server.server_error_every = 1
    journal = ListJournal()
    client = LLMClient(_config(judge_server, retries=1), cache=ResponseCache(tmp_path / "c.sqlite"), journal=journal,
                       retry_policy=RetryPolicy(base=0.0))
    answers = client.complete_choices(_ask("Q"), 2)
    assert [a.error for a in answers] == ["server_error: HTTP 500: " + '{"error": {"message": "internal error", '
                                          '"type": "test"}} (after 2 attempts)'] * 2
    assert judge_server.calls == 2  # one call and its retry, for both answers
    assert journal.messages() == ["retrying annotator request", "annotator request failed",
                                  "annotator request failed"]
    assert client.stats.failed == 2 and client.stats.retries == 1
    judge_server.server_error_every = None
    judge_server.default = "fine"
    assert [a.text for a in client.complete_choices(_ask("Q"), 2)] == ["fine", "fine"]


def test_an_endpoint_that_ignores_n_is_asked_once_per_answer_from_then_on(judge_server, tmp_path):
    judge_server.default = _counting("a")
    judge_server.ignore_n = True
    client = LLMClient(_config(judge_server), cache=ResponseCache(tmp_path / "c.sqlite"))
    assert [a.text for a in client.complete_choices(_ask("Q1"), 3)] == ["a 1", "a 2", "a 3"]
    assert [c.choices for c in judge_server.requests] == [3, 1, 1]
    assert [a.text for a in client.complete_choices(_ask("Q2"), 2)] == ["a 4", "a 5"]
    assert [c.choices for c in judge_server.requests] == [3, 1, 1, 1, 1]


def test_multiple_choices_false_asks_once_per_answer(judge_server, tmp_path):
    judge_server.default = _counting("a")
    client = LLMClient(_config(judge_server, multiple_choices=False), cache=ResponseCache(tmp_path / "c.sqlite"))
    assert [a.text for a in client.complete_choices(_ask("Q"), 3)] == ["a 1", "a 2", "a 3"]
    assert [c.choices for c in judge_server.requests] == [1, 1, 1]
