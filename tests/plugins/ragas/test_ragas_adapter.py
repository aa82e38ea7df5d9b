"""The ragas adapters on their own: n answers are n cached requests, an identical prompt in flight is asked
once, a failed call raises, embeddings come from the given function; and the two formulas Sonar computes."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from langchain_core.prompt_values import StringPromptValue

from sonar_core.llm import LLMClient, LLMConfig, ResponseCache
from sonar_plugins.ragas.adapter import CALL_LOG, JudgeCallFailed, SonarRagasEmbeddings, SonarRagasLLM
from sonar_plugins.ragas.answer_correctness import f1
from sonar_plugins.ragas.ragas_score import harmonic_mean


def _llm(server, tmp_path, **settings) -> SonarRagasLLM:
    config = LLMConfig(key="t", base_url=server.base_url, model="m", **settings)
    return SonarRagasLLM(LLMClient(config, cache=ResponseCache(tmp_path / "cache.sqlite")), tags={"evaluator": "x"})


def test_n_answers_are_one_call_with_n_choices_cached_as_n_repeats(judge_server, tmp_path):
    count = iter(range(1, 100))
    judge_server.default = lambda prompt: f"answer {next(count)} to {prompt}"
    llm = _llm(judge_server, tmp_path)
    result = asyncio.run(llm.agenerate_text(StringPromptValue(text="q1"), n=3))
    assert [g.text for g in result.generations[0]] == ["answer 1 to q1", "answer 2 to q1", "answer 3 to q1"]
    assert [c.choices for c in judge_server.requests] == [3]
    again = asyncio.run(llm.agenerate_text(StringPromptValue(text="q1"), n=3))
    assert [g.text for g in again.generations[0]] == ["answer 1 to q1", "answer 2 to q1", "answer 3 to q1"]
    assert judge_server.calls == 1  # from the cache
    llm.close()


def test_n_answers_from_an_endpoint_without_choices_are_n_calls(judge_server, tmp_path):
    count = iter(range(1, 100))
    judge_server.default = lambda prompt: f"answer {next(count)}"
    llm = _llm(judge_server, tmp_path, multiple_choices=False)
    result = llm.generate_text(StringPromptValue(text="q1"), n=3)
    assert sorted(g.text for g in result.generations[0]) == ["answer 1", "answer 2", "answer 3"]
    assert [c.choices for c in judge_server.requests] == [1, 1, 1]
    llm.close()


def test_an_identical_prompt_in_flight_is_asked_once_and_logged_for_each_asker(judge_server, tmp_path):
    judge_server.default = "same"
    judge_server.latency = 0.3
    llm = _llm(judge_server, tmp_path, max_concurrency=4)

    async def ask(logs):
        log: list = []
        CALL_LOG.set(log)
        await llm.agenerate_text(StringPromptValue(text="shared prompt"))
        logs.append(log)

    async def main():
        logs: list = []
        await asyncio.gather(*(ask(logs) for _ in range(4)))
        return logs

    logs = asyncio.run(main())
    assert judge_server.calls == 1
    assert [[(c["prompt"], c["answer"]) for c in log] for log in logs] == [[("shared prompt", "same")]] * 4
    llm.close()


def test_a_failed_call_raises_with_the_clients_error(judge_server, tmp_path):
    judge_server.server_error_every = 1
    llm = _llm(judge_server, tmp_path, retries=0)
    with pytest.raises(JudgeCallFailed, match=r"^judge call failed: .*\(after 1 attempt\)$"):
        asyncio.run(llm.agenerate_text(StringPromptValue(text="q")))
    assert judge_server.calls == 1
    llm.close()


def test_embeddings_come_from_the_given_function():
    asked = []

    def embed(texts):
        asked.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    embeddings = SonarRagasEmbeddings(embed)
    assert embeddings.embed_query("abc") == [3.0, 1.0]
    assert asyncio.run(embeddings.aembed_documents(["a", "abcd"])) == [[1.0, 1.0], [4.0, 1.0]]
    assert asked == [["abc"], ["a", "abcd"]]


def test_concurrent_rows_embeddings_are_encoded_in_one_call():
    # ragas embeds row by row, each row a task: requests of one turn of the event loop share an encode.
    asked = []

    def embed(texts):
        asked.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    embeddings = SonarRagasEmbeddings(embed)

    async def rows():
        return await asyncio.gather(embeddings.aembed_query("ab"), embeddings.aembed_documents(["abc", "a"]),
                                    embeddings.aembed_query("abcde"))

    assert asyncio.run(rows()) == [[2.0, 1.0], [[3.0, 1.0], [1.0, 1.0]], [5.0, 1.0]]
    assert asked == [["ab", "abc", "a", "abcde"]]


def test_a_failed_encode_reaches_every_row_that_waited_for_it():
    def embed(texts):
        raise RuntimeError("no model")

    embeddings = SonarRagasEmbeddings(embed)

    async def rows():
        return await asyncio.gather(embeddings.aembed_query("a"), embeddings.aembed_query("b"), return_exceptions=True)

    assert [str(e) for e in asyncio.run(rows())] == ["no model", "no model"]


def test_harmonic_mean_and_its_zero_cases():
    assert harmonic_mean([1.0, 1.0, 5 / 6, 1.0]) == pytest.approx(4 / 4.2)
    assert harmonic_mean([0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.5)
    assert harmonic_mean([1.0, 0.0, 1.0, 1.0]) == 0.0
    assert harmonic_mean([1.0, -0.2, 1.0, 1.0]) == 0.0


def test_factuality_f1():
    assert f1(3, 1, 0) == pytest.approx(3 / 3.5)
    assert f1(1, 2, 1) == pytest.approx(0.4)
    assert f1(0, 2, 2) == 0.0


def test_the_ragas_evaluators_declare_their_judge():
    from sonar_plugins.ragas.faithfulness import FaithfulnessEvaluator

    params = FaithfulnessEvaluator.validate_params({"custom_eval_judge_config_key": "gpt"})
    assert FaithfulnessEvaluator.requires_judge is True
    assert FaithfulnessEvaluator.judge_key(params) == "gpt"
    assert FaithfulnessEvaluator.judge_key(FaithfulnessEvaluator.validate_params({})) is None
    assert FaithfulnessEvaluator.judge_prompt() == ""  # ragas's prompts are its own, not a declared template
