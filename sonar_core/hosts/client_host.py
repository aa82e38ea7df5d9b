"""A host that asks through the shared LLM client: cache, concurrency bound, retries, journal.

Every built-in kind is one :class:`ClientHost` with its own backend (chat endpoint, RAG service,
local model, Python callable). The client journals ``fetched sut response`` / ``using cached sut
response`` (and ``retrying sut request`` / ``sut request failed``); the host adds ``translated
sut response`` once the answer is in Sonar's form (text, contexts, tokens, cost, duration).
"""

from __future__ import annotations


from pydantic import BaseModel, ConfigDict, Field

from ..llm.backends import Backend
from ..llm.client import SUT_EVENTS, Completion, LLMClient, LLMRequest
from ..llm.configs import LLMConfig, LLMIdentity
from ..llm.requests import ClientCounts
from ..llm.tokens import Price, usage_tokens as _tokens
from .base import Host, HostAnswer

__all__ = ["HostSpec", "ClientHost", "Price"]


class HostSpec(BaseModel):
    """Settings every kind shares (one entry of ``hosts:`` in the run configuration)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    key: str = Field(min_length=1)
    kind: str
    #: Declare the answers deterministic (None: the kind decides, e.g. temperature 0).
    deterministic: bool | None = None
    #: Read and write the response cache for this host.
    cache: bool = True
    timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=3, ge=0)
    backoff: float = Field(default=0.5, ge=0)
    max_concurrency: int = Field(default=8, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    description: str = ""
    #: Halve the in-flight limit on a 429, grow it back after successes (docs/concurrency.md); false: fixed.
    adaptive_concurrency: bool = True


class ClientHost(Host):
    """A host whose calls go through an :class:`LLMClient` with a kind-specific backend."""

    def __init__(self, spec: HostSpec, *, backend: Backend, config: LLMConfig, identity: LLMIdentity,
                 services, deterministic: bool, system_prompt: str = "") -> None:
        super().__init__(spec.key, deterministic=deterministic if spec.deterministic is None else spec.deterministic)
        self.kind = spec.kind
        self.spec = spec
        self.system_prompt = system_prompt
        self.journal = services.journal
        self.price: Price | None = services.price_for(spec.key)
        # The kind and key are part of the cache key: two hosts never share answers, and a
        # host's answers never mix with a judge's for the same model and prompt.
        if config.adaptive_concurrency != spec.adaptive_concurrency:
            config = config.model_copy(update={"adaptive_concurrency": spec.adaptive_concurrency})
        self.client = LLMClient(config, cache=services.cache if spec.cache else None, journal=services.journal,
                                redact=services.redact, backend=backend, events=SUT_EVENTS,
                                identity={**identity, "host_kind": spec.kind, "host_key": spec.key}, envelope=True)

    def messages(self, prompt: str) -> list[dict[str, str]]:
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return messages + [{"role": "user", "content": prompt}]

    def ask_many(self, prompts: list[str], *, repeat: int = 0,
                 tags: dict | list[dict] | None = None) -> list[HostAnswer]:
        """See :meth:`Host.ask_many`; ``tags`` may also be one dict per prompt (the journal's item fields)."""
        per_prompt = tags if isinstance(tags, list) else [dict(tags or {}) for _ in prompts]
        if len(per_prompt) != len(prompts):
            raise ValueError(f"{len(per_prompt)} tag sets for {len(prompts)} prompts")
        requests = [LLMRequest(self.messages(prompt), repeat=repeat, tags={"model_key": self.key, **item_tags})
                    for prompt, item_tags in zip(prompts, per_prompt)]
        completions = self.client.complete_many(requests)
        answers = [self._answer(c) for c in completions]
        if self.journal is not None:
            self.journal.events("translated sut response", "HostWorker", "ask_many", (
                {**request.tags, "response_text": answer.text, "error": answer.error, "cached": answer.cached,
                 "duration": round(answer.duration, 4), "input_tokens": answer.input_tokens,
                 "output_tokens": answer.output_tokens, "cost": answer.cost, "contexts": answer.contexts,
                 "repeat": repeat or None}
                for request, answer in zip(requests, answers)))
        return answers

    def _answer(self, completion: Completion) -> HostAnswer:
        if completion.error is not None:
            return HostAnswer(text=None, error=completion.error, duration=completion.seconds)
        input_tokens, output_tokens = _tokens(completion.meta)
        contexts = completion.meta.get("contexts")
        cost = self.price.cost(input_tokens, output_tokens) if self.price is not None else None
        return HostAnswer(text=completion.text, duration=completion.seconds, input_tokens=input_tokens,
                          output_tokens=output_tokens, cost=cost,
                          contexts=[str(c) for c in contexts] if isinstance(contexts, list) else None,
                          cached=completion.cached, cleaned=completion.cleaned)

    def attach(self, journal) -> None:
        self.journal = journal
        self.client.journal = journal

    def stats(self) -> ClientCounts:
        return self.client.stats.as_dict()

    def close(self) -> None:
        self.client.close()
