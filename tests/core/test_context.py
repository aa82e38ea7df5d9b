"""The evaluation context hands out only the services the run gave it, and the test helper's context."""

from __future__ import annotations

import pytest

from sonar_core import EvaluationContext
from sonar_core.models import EmbeddingService
from sonar_core.run_memo import RunMemo
from sonar_core.testing import make_context


def test_a_context_without_an_embedding_service_says_so_instead_of_making_one():
    ctx = EvaluationContext(memo=RunMemo(), label="answer_similarity")
    with pytest.raises(RuntimeError) as error:
        ctx.embed(["text"])
    assert str(error.value) == ("evaluator 'answer_similarity' asked for embeddings, but the run provided no "
                                "embedding service (EvaluationContext.embeddings is None)")
    assert ctx.embeddings is None


def test_a_context_without_an_llm_service_says_so_instead_of_making_one():
    ctx = EvaluationContext(memo=RunMemo())
    with pytest.raises(RuntimeError) as error:
        ctx.judge("gpt")
    assert str(error.value) == ("an evaluator asked for a judge, but the run provided no LLM service "
                                "(EvaluationContext.llm is None)")
    assert ctx.llm is None


def test_the_run_memo_is_always_given():
    with pytest.raises(TypeError, match="memo"):
        EvaluationContext()


def test_the_test_context_holds_what_it_was_given_and_an_embedding_service():
    service = EmbeddingService(device="cpu")
    memo = RunMemo()
    ctx = make_context(device="cpu", embeddings=service, memo=memo, label="x")
    assert (ctx.embeddings, ctx.memo, ctx.device, ctx.label, ctx.llm, ctx.hosts) == (service, memo, "cpu", "x", None, None)
    fresh = make_context(device="cpu")
    assert isinstance(fresh.embeddings, EmbeddingService) and fresh.embeddings is not service
    assert fresh.embeddings.device_setting == "cpu"
    assert isinstance(fresh.memo, RunMemo) and fresh.memo is not memo
