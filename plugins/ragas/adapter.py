"""ragas's LLM and embeddings, answered by the run's judge client and embedding service.

ragas metrics ask a ``BaseRagasLLM`` for text and a ``BaseRagasEmbeddings`` for vectors. The two
adapters here route those asks through the run's services, so everything a judge evaluator gets
applies to ragas too: the response cache (a rerun asks nothing), the concurrency bound, pacing,
retries, the journal and secret redaction (the :class:`~sonar_core.llm.LLMClient` that
``ctx.judge(key)`` returns), and each text embedded once per run (``ctx.embed``).

ragas's own retry loop (tenacity, 10 attempts with waits up to a minute) is switched off: the
client already retried, and a failure it returns is final for the row.

It lives in the ragas plugin, not in the core: importing it imports ragas and patches it (below),
which only the ragas evaluators want, when they score rows.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

# ragas posts usage analytics to its vendor unless told not to; Sonar runs make no outside call.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from langchain_core.outputs import Generation, LLMResult  # noqa: E402 - after the tracking switch
from ragas.embeddings.base import BaseRagasEmbeddings  # noqa: E402
from ragas.llms.base import BaseRagasLLM  # noqa: E402
from ragas.run_config import RunConfig  # noqa: E402

from sonar_core import LLMClient, LLMRequest  # noqa: E402


def _memoize_output_signature() -> None:
    """ragas renders each prompt's JSON schema (pydantic ``model_json_schema``) on every call: about 3 ms,
    more than half of what a cached rerun costs. The schema is a function of the output model class alone,
    so it is rendered once per class; the text is unchanged."""
    from ragas.prompt.pydantic_prompt import PydanticPrompt

    original = PydanticPrompt._generate_output_signature
    if getattr(original, "_sonar_memoized", False):
        return
    rendered: dict[tuple[type, int], str] = {}

    def signature(self, indent: int = 4) -> str:
        key = (self.output_model, indent)
        text = rendered.get(key)
        if text is None:
            text = rendered[key] = original(self, indent)
        return text

    signature._sonar_memoized = True  # type: ignore[attr-defined]
    PydanticPrompt._generate_output_signature = signature  # type: ignore[method-assign]


_memoize_output_signature()

# ragas logs every answer it cannot parse at ERROR level; Sonar reports those in the row's message and
# counts them as parse failures, so the console stays quiet.
logging.getLogger("ragas").setLevel(logging.CRITICAL)

__all__ = ["SonarRagasLLM", "SonarRagasEmbeddings", "JudgeCallFailed", "CALL_LOG", "CALL_TAGS", "no_retry_config"]

#: Where the adapter records each answer of the current ragas task (a list, or None for no record):
#: set per scored (row, metric) so a row's details can show what the judge said.
CALL_LOG: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar("sonar_ragas_calls",
                                                                                          default=None)
#: Journal fields of the current ragas task's requests (test case, model), added to the adapter's own.
CALL_TAGS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("sonar_ragas_tags", default=None)


class JudgeCallFailed(RuntimeError):
    """The judge client gave up on a request (after its own retries); the message is its error."""


def no_retry_config() -> RunConfig:
    """ragas's run configuration with its retry loop off (one attempt) and no timeout of its own."""
    return RunConfig(max_retries=1, max_wait=0, timeout=None)  # type: ignore[arg-type]


class SonarRagasLLM(BaseRagasLLM):
    """A ``BaseRagasLLM`` whose every prompt is one request to a Sonar :class:`LLMClient`.

    ``n`` completions of one prompt are the repeats 0..n-1 of one request, asked in one call with
    ``n`` choices where the endpoint can (:meth:`LLMClient.complete_choices`; each answer is its own
    cache entry), as ragas's own LangChain wrapper asks OpenAI. The sampling temperature is the configuration's, not ragas's: the configuration
    owns how the judge is asked. Blocking client calls run on a thread pool as wide as the client's
    concurrency bound, so ragas's concurrent prompts are concurrent requests. A prompt asked again
    while the same prompt is in flight (one test case's context judged for each model's row) waits
    for that answer instead of asking twice: the response cache only helps once an answer is in.
    """

    def __init__(self, client: LLMClient, tags: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> None:
        super().__init__(run_config=no_retry_config())
        self.client = client
        self.tags = dict(tags or {})
        self.max_tokens = max_tokens
        self._pool = ThreadPoolExecutor(max_workers=max(1, client.config.max_concurrency),
                                        thread_name_prefix=f"ragas-{client.config.key}")
        self._in_flight: dict[tuple[str, int], asyncio.Future] = {}

    def set_run_config(self, run_config: RunConfig) -> None:
        # evaluate()-style callers hand their configuration down; keep the retry loop off anyway.
        self.run_config = no_retry_config()

    def is_finished(self, response: LLMResult) -> bool:
        # A cut-off answer is a parse failure downstream, with the text kept; nothing to re-ask.
        return True

    def _requests(self, prompt: Any, n: int) -> list[LLMRequest]:
        text = prompt.to_string() if hasattr(prompt, "to_string") else str(prompt)
        messages = [{"role": "user", "content": text}]
        tags = {**self.tags, **(CALL_TAGS.get() or {})}
        return [LLMRequest(messages, repeat=i, max_tokens=self.max_tokens, tags=dict(tags)) for i in range(max(1, n))]

    def _result(self, requests: list[LLMRequest], completions: list) -> LLMResult:
        log = CALL_LOG.get()
        if log is not None:
            prompt = requests[0].messages[-1]["content"]
            for completion in completions:
                log.append({"prompt": prompt, "answer": completion.text, "error": completion.error,
                            "cached": completion.cached})
        failed = next((c for c in completions if not c.ok), None)
        if failed is not None:
            raise JudgeCallFailed(f"judge call failed: {failed.error}")
        return LLMResult(generations=[[Generation(text=c.text or "") for c in completions]])

    def _ask(self, requests: list[LLMRequest]) -> list:
        if len(requests) == 1:
            return self.client.complete_many(requests)
        return self.client.complete_choices(requests[0], len(requests))

    def generate_text(self, prompt: Any, n: int = 1, temperature: float = 0.01, stop: list[str] | None = None,
                      callbacks: Any = None) -> LLMResult:
        requests = self._requests(prompt, n)
        return self._result(requests, self._ask(requests))

    async def agenerate_text(self, prompt: Any, n: int = 1, temperature: float | None = 0.01,
                             stop: list[str] | None = None, callbacks: Any = None) -> LLMResult:
        requests = self._requests(prompt, n)
        if all(self.client.is_cached(r) for r in requests):
            # A rerun: answering from the cache here is cheaper than a hop to a worker thread.
            return self._result(requests, self._ask(requests))
        key = (requests[0].messages[-1]["content"], len(requests))
        future = self._in_flight.get(key)
        if future is None:
            future = asyncio.get_running_loop().run_in_executor(self._pool, self._ask, requests)
            self._in_flight[key] = future
            future.add_done_callback(lambda _: self._in_flight.pop(key, None))
        # shield: one waiter cancelled (a ragas timeout) must not cancel the others' answer.
        return self._result(requests, await asyncio.shield(future))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __repr__(self) -> str:
        return f"SonarRagasLLM(judge={self.client.config.key!r})"


class SonarRagasEmbeddings(BaseRagasEmbeddings):
    """A ``BaseRagasEmbeddings`` over ``embed(texts) -> (n, d) array`` (``ctx.embed`` with a model).

    ragas embeds one row's texts at a time, and every row of a batch runs as its own task: one
    encoder call per row on the event loop would hold up every request in flight. So asynchronous
    requests made in the same turn of the loop are gathered into one call, and that call runs on
    this adapter's own worker thread, not on the loop. :meth:`prefetch` queues texts the caller
    knows ragas will ask for on the same thread, in chunks, so they are encoded while the judge
    is being asked and ragas's own requests (synchronous ones too) find them in the embedding
    service's cache. Call :meth:`close` when done.
    """

    #: Texts per encoder call of a prefetch: a synchronous request waits at most one chunk.
    PREFETCH_CHUNK = 64

    def __init__(self, embed: Callable[[list[str]], Any]) -> None:
        super().__init__()
        self._embed = embed
        self.run_config = no_retry_config()
        self._pending: list[tuple[list[str], asyncio.Future]] = []
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragas-embed")

    def set_run_config(self, run_config: RunConfig) -> None:
        self.run_config = no_retry_config()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._embed(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` on the worker thread, in order, ahead of ragas's requests (errors are left for
        the request that needs the text to meet)."""
        texts = list(texts)
        for start in range(0, len(texts), self.PREFETCH_CHUNK):
            self._worker.submit(self._quietly, texts[start:start + self.PREFETCH_CHUNK])

    def _quietly(self, texts: list[str]) -> None:
        try:
            self._embed(texts)
        except Exception:  # the request that needs one of these texts gets the error itself
            pass

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((list(texts), future))
        return await future

    async def aembed_query(self, text: str) -> list[float]:
        return (await self.aembed_documents([text]))[0]

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        work = asyncio.get_running_loop().run_in_executor(
            self._worker, self.embed_documents, [text for texts, _ in pending for text in texts])
        work.add_done_callback(lambda done: self._deliver(pending, done))

    @staticmethod
    def _deliver(pending: list[tuple[list[str], asyncio.Future]], done: asyncio.Future) -> None:
        error = done.exception()
        if error is not None:  # every waiting row gets the error, as its own call would have
            for _, future in pending:
                if not future.done():
                    future.set_exception(error)
            return
        vectors = done.result()
        start = 0
        for texts, future in pending:
            if not future.done():
                future.set_result(vectors[start:start + len(texts)])
            start += len(texts)

    def close(self) -> None:
        """Stop the worker: queued prefetches are dropped, the one running finishes."""
        self._worker.shutdown(wait=True, cancel_futures=True)
