"""Constrained verdicts over HTTP: top tokens read as labels, the text fallback, the cache key."""

from __future__ import annotations

import math

import pytest

from sonar_core.llm import LLMClient, LLMConfig, LLMRequest, ResponseCache
from sonar_core.llm.labels import label_distribution, labels_from_top_tokens, token_label

from judge_server import JudgeServer

LABELS = ("present", "absent")


def test_a_token_stands_for_the_label_it_spells_or_alone_begins():
    assert token_label(" Present", LABELS) == "present"
    assert token_label("ABS", LABELS) == "absent"
    assert token_label("1", ("1", "10")) == "1"  # spelled exactly
    assert token_label("1", ("10", "11")) is None  # begins two labels
    assert token_label("The", LABELS) is None and token_label("  ", LABELS) is None


def test_top_tokens_become_each_labels_share():
    top = [(" present", math.log(0.6)), ("Present", math.log(0.1)), ("absent", math.log(0.2)), ("The", math.log(0.1))]
    assert labels_from_top_tokens(top, LABELS) == pytest.approx({"present": 0.7 / 0.9, "absent": 0.2 / 0.9})
    assert labels_from_top_tokens([("The", 0.0)], LABELS) is None


def test_label_distribution_is_a_softmax():
    assert label_distribution({"a": math.log(3.0), "b": math.log(1.0)}) == pytest.approx({"a": 0.75, "b": 0.25})


def _client(server, tmp_path, **settings) -> LLMClient:
    config = LLMConfig(key="j", base_url=server.base_url, model="m", retries=0, **settings)
    return LLMClient(config, cache=ResponseCache(tmp_path / "c.sqlite"))


def test_the_logprobs_path_answers_a_label_with_its_confidence_and_caches_both(tmp_path):
    top = [(" Present", math.log(0.7)), ("Absent", math.log(0.2)), ("pres", math.log(0.05)), ("I", math.log(0.05))]
    with JudgeServer(default="Present, I think", top_logprobs=lambda prompt: top) as server:
        client = _client(server, tmp_path)
        first = client.complete_many([LLMRequest([{"role": "user", "content": "Q"}], labels=LABELS, max_tokens=5)])[0]
        body = server.requests[0].body
        again = client.complete_many([LLMRequest([{"role": "user", "content": "Q"}], labels=LABELS, max_tokens=5)])[0]
        calls = server.calls
    assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 20, 5)
    assert first.text == "present" and not first.cached
    assert first.confidence == pytest.approx(0.75 / 0.95, abs=1e-12)
    assert first.meta["label_probabilities"] == pytest.approx({"present": 0.75 / 0.95, "absent": 0.2 / 0.95})
    assert again.cached and again.text == "present" and again.confidence == pytest.approx(0.75 / 0.95, abs=1e-12)
    assert calls == 1


def test_a_labelled_answer_never_collides_with_a_free_text_one(tmp_path):
    with JudgeServer(default="absent") as server:
        client = _client(server, tmp_path)
        messages = [{"role": "user", "content": "Q"}]
        text = client.complete_many([LLMRequest(messages)])[0]
        labelled = client.complete_many([LLMRequest(messages, labels=LABELS)])[0]
        assert server.calls == 2 and [c.logprobs for c in server.requests] == [False, True]
    assert (text.text, text.confidence) == ("absent", None)
    assert (labelled.text, labelled.confidence, labelled.cached) == ("absent", 1.0, False)
    assert text.key != labelled.key


def test_an_endpoint_without_logprobs_is_noticed_once_and_read_as_text(tmp_path):
    with JudgeServer(default=" Absent.", ignore_logprobs=True) as server:
        client = _client(server, tmp_path, max_concurrency=1)
        answers = client.complete_many([LLMRequest([{"role": "user", "content": f"Q{i}"}], labels=LABELS)
                                        for i in range(3)])
        asked = [c.logprobs for c in server.requests]
    assert [(a.text, a.confidence) for a in answers] == [(" Absent.", None)] * 3
    assert asked == [True, False, False]


def test_top_tokens_that_name_no_label_give_the_text_without_confidence(tmp_path):
    with JudgeServer(default="Maybe", top_logprobs=lambda p: [("Maybe", -0.1), ("Perhaps", -2.0)]) as server:
        client = _client(server, tmp_path)
        answer = client.complete_many([LLMRequest([{"role": "user", "content": "Q"}], labels=LABELS)])[0]
        again = client.complete_many([LLMRequest([{"role": "user", "content": "R"}], labels=LABELS)])[0]
        asked = [c.logprobs for c in server.requests]
    assert (answer.text, answer.confidence, again.confidence) == ("Maybe", None, None)
    assert asked == [True, True]  # the endpoint does give log-probabilities: keep asking
