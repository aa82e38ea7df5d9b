"""``openai_chat``: any OpenAI-compatible ``/chat/completions`` endpoint as the model under test."""

from __future__ import annotations

from pydantic import Field

from ..llm.backends import OpenAIChatBackend
from ..llm.configs import LLMConfig
from ..llm.secrets import api_key_for
from .client_host import ClientHost, HostSpec

__all__ = ["OpenAIChatSpec", "make_openai_chat_host"]


class OpenAIChatSpec(HostSpec):
    """Any OpenAI-compatible /chat/completions endpoint, through Sonar's LLM client."""

    base_url: str | None = None
    model: str
    #: Name of the environment variable holding the API key (never the key itself).
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=1)
    system_prompt: str = ""


def make_openai_chat_host(spec: OpenAIChatSpec, services) -> ClientHost:
    config = LLMConfig(key=spec.key, backend="openai", base_url=spec.base_url, model=spec.model,
                       api_key_env=spec.api_key_env, temperature=spec.temperature, max_tokens=spec.max_tokens,
                       timeout=spec.timeout, retries=spec.retries, backoff=spec.backoff,
                       max_concurrency=spec.max_concurrency, requests_per_minute=spec.requests_per_minute,
                       description=spec.description)
    api_key = api_key_for(config)
    services.redact.add(api_key)
    identity = {**config.identity(), "system_prompt": spec.system_prompt}
    return ClientHost(spec, backend=OpenAIChatBackend(config, api_key), config=config, identity=identity,
                      services=services, deterministic=spec.temperature == 0, system_prompt=spec.system_prompt)
