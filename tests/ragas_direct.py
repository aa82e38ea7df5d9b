"""ragas's own ``evaluate()`` on Sonar dataset rows, run as a ragas user would run it.

The reference side of the equality test (tests/plugins/ragas) and of bench/bench_ragas.py: LangChain's
``ChatOpenAI`` on an OpenAI-compatible endpoint (the scripted server), and a sentence-transformers
encoder called directly for the embeddings, with no Sonar code in between.
"""

from __future__ import annotations

from typing import Any


def evaluate_directly(rows: list[dict], metrics: list, base_url: str, encoder, *, max_workers: int,
                      model: str = "scripted-judge") -> list[dict[str, Any]]:
    """ragas's scores per row (``result.scores``), in the order of ``rows``."""
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.dataset_schema import SingleTurnSample
    from ragas.embeddings.base import BaseRagasEmbeddings
    from ragas.llms import LangchainLLMWrapper

    class DirectEmbeddings(BaseRagasEmbeddings):
        def embed_documents(self, texts):
            return encoder.encode(list(texts), convert_to_numpy=True).tolist()

        def embed_query(self, text):
            return self.embed_documents([text])[0]

        async def aembed_documents(self, texts):
            return self.embed_documents(texts)

        async def aembed_query(self, text):
            return self.embed_query(text)

    samples = [SingleTurnSample(user_input=r["input"], response=r["actual_output"], retrieved_contexts=r["context"],
                                reference=r["expected_output"]) for r in rows]
    llm = LangchainLLMWrapper(ChatOpenAI(model=model, base_url=base_url, api_key="unused", temperature=0,
                                         max_retries=0, timeout=60))
    result = evaluate(EvaluationDataset(samples), metrics=metrics, llm=llm, embeddings=DirectEmbeddings(),
                      run_config=RunConfig(max_retries=1, max_workers=max_workers), show_progress=False)
    return result.scores
