"""LLM configurations: named judges and model hosts, read from a YAML file.

A configuration says how to reach one LLM: the backend (an OpenAI-compatible chat-completions
endpoint, or a local Hugging Face causal LM from the model store), the model, the *name* of the
environment variable that holds the API key (never the key itself), sampling settings and the
client's limits. Evaluators pick one by key (``custom_eval_judge_config_key``).

The file (``llm_configs:`` in a run configuration, else ``$SONAR_LLM_CONFIGS``, else
``~/.config/sonar/llm-configs.yaml``)::

    default_judge: gpt-4o-mini          # optional: the run-level default judge
    llms:
      gpt-4o-mini:
        backend: openai
        base_url: https://api.openai.com/v1
        model: gpt-4o-mini
        api_key_env: OPENAI_API_KEY     # the variable's name; its value is never written anywhere
        requests_per_minute: 500
      local-vllm:
        base_url: http://127.0.0.1:8000/v1
        model: meta-llama/Llama-3.1-8B-Instruct

The built-in ``local-smollm2`` (SmolLM2-135M-Instruct from the model store) is always there, so
judge evaluators run offline out of the box; a file may redefine it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, validation_message
from ..jsontypes import JsonObject
from ..yaml_files import read_yaml

__all__ = [
    "LLMConfig",
    "LLMIdentity",
    "LLMConfigSet",
    "BUILT_IN_CONFIGS",
    "DEFAULT_JUDGE",
    "default_configs_path",
    "load_llm_configs",
]

class LLMIdentity(TypedDict, total=False):
    """What decides an LLM's or a host's answers, as the response cache keys them: never a key or a secret.
    An LLM configuration gives the first three; a host adds what makes its answers its own."""
    backend: str
    base_url: str
    model: str
    system_prompt: str | None  #: a chat host's
    callable: str  #: a python host's (``chat`` when it is asked conversations)
    chat: bool
    url: str  #: a rag_http host's
    host_kind: str
    host_key: str
    temperature: float  #: a judge's calibration adds its sampling


#: The judge used when neither the evaluator nor the run names one.
DEFAULT_JUDGE = "local-smollm2"


class LLMConfig(BaseModel):
    """How to reach one LLM.

    Attributes:
        key: the name evaluators and runs use.
        backend: ``openai`` (any OpenAI-compatible chat-completions endpoint: OpenAI, Azure's
            v1 endpoint, vLLM, Ollama, llama.cpp server...) or ``local`` (a causal LM from the
            model store: a known name, a local folder or a cached Hugging Face id).
        base_url: the endpoint's base URL (``.../v1``); ``openai`` backend only.
        model: the model name sent to the endpoint, or the model store reference.
        api_key_env: name of the environment variable holding the API key; empty for
            endpoints that need none.
        temperature: sampling temperature; 0 is greedy.
        max_tokens: most tokens the LLM may generate per answer.
        timeout: seconds one request may take before it counts as timed out.
        retries: how many times a failed request (timeout, 429, 5xx, dropped connection,
            malformed body) is tried again.
        backoff: seconds before the first retry (a server's Retry-After overrides it); each
            further retry waits about twice as long, with jitter, up to 30 s.
        max_concurrency: requests in flight at once (the ceiling when ``adaptive_concurrency``).
        adaptive_concurrency: halve the in-flight limit on a 429 and grow it back by one after a
            run of successes, between 1 and ``max_concurrency`` (:mod:`.adaptive`); false keeps
            ``max_concurrency`` fixed.
        multiple_choices: ask for several answers to one prompt in one call (the chat-completions
            ``n``) where an evaluator wants several; false for endpoints that reject ``n``. An
            endpoint that ignores it is noticed and asked once per answer.
        requests_per_minute: requests started per minute at most; empty for no limit.
        device: where a ``local`` model runs (``auto``, ``cpu``, ``cuda``).
        description: free text shown by ``sonar judges``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    key: str
    backend: Literal["openai", "local"] = "openai"
    base_url: str | None = None
    model: str
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=5, ge=0)
    backoff: float = Field(default=0.5, ge=0)
    max_concurrency: int = Field(default=8, ge=1)
    multiple_choices: bool = True
    requests_per_minute: float | None = Field(default=None, gt=0)
    device: str = "auto"
    description: str = ""
    adaptive_concurrency: bool = True

    def identity(self) -> "LLMIdentity":
        """What decides the answers (for the response cache's key): no key name, no secret,
        no client limits."""
        return {"backend": self.backend, "base_url": (self.base_url or "").rstrip("/"), "model": self.model}

    def public(self) -> JsonObject:
        """The configuration as run.json and ``sonar judges`` show it (the key's variable name only).
        ``adaptive_concurrency`` only when turned off, so run.json of a default run is as it was."""
        return self.model_dump(mode="json", exclude={"adaptive_concurrency"} if self.adaptive_concurrency else None)

    def describe(self) -> str:
        """One line naming the LLM, for reports."""
        where = "local model store" if self.backend == "local" else (self.base_url or "OpenAI API")
        return f"{self.key} ({self.backend} backend, model {self.model}, {where})"


BUILT_IN_CONFIGS: dict[str, LLMConfig] = {
    DEFAULT_JUDGE: LLMConfig(
        key=DEFAULT_JUDGE,
        backend="local",
        model="smollm2",
        temperature=0.0,
        max_tokens=64,
        timeout=600.0,
        retries=0,
        max_concurrency=1,
        description="SmolLM2-135M-Instruct on this machine, greedy: runs offline, but is small and often wrong "
                    "as a judge; point judges at a stronger endpoint for results you rely on",
    ),
}


@dataclass
class LLMConfigSet:
    """Every configuration a run can use, and where they came from."""

    configs: dict[str, LLMConfig] = field(default_factory=lambda: dict(BUILT_IN_CONFIGS))
    default_judge: str | None = None
    source: Path | None = None

    def get(self, key: str) -> LLMConfig:
        try:
            return self.configs[key]
        except KeyError:
            known = ", ".join(sorted(self.configs))
            where = f" in {self.source}" if self.source else ""
            raise ConfigError(f"unknown LLM configuration '{key}'{where} (known: {known})") from None


def default_configs_path() -> Path:
    """``$SONAR_LLM_CONFIGS``, else ``$XDG_CONFIG_HOME/sonar/llm-configs.yaml`` (``~/.config``)."""
    explicit = os.environ.get("SONAR_LLM_CONFIGS")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base).expanduser() / "sonar" / "llm-configs.yaml"


def _config_error(source: Path, key: str, error: ValidationError) -> ConfigError:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    hint = ""
    if first["type"] == "extra_forbidden" and "key" in location:
        hint = " (name the environment variable that holds the key with api_key_env)"
    return ConfigError(f"{source}: LLM configuration '{key}': {validation_message(error, 'key')}{hint}")


def load_llm_configs(path: str | Path | None = None, *, required: bool = False) -> LLMConfigSet:
    """The built-in configurations plus those of ``path`` (or the default file when it exists).

    Args:
        path: the YAML file; None means :func:`default_configs_path`.
        required: True when the user named the file, so a missing file is an error.
    """
    source = Path(path).expanduser() if path is not None else default_configs_path()
    result = LLMConfigSet()
    if not source.is_file():
        if required:
            raise ConfigError(f"{source}: LLM configuration file not found")
        return result
    result.source = source
    data = read_yaml(source, "LLM configuration file") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping with 'llms' (and optionally 'default_judge')")
    unknown = sorted(set(data) - {"llms", "default_judge"})
    if unknown:
        raise ConfigError(f"{source}: unknown key '{unknown[0]}' (expected 'llms' and 'default_judge')")
    entries = data.get("llms") or {}
    if not isinstance(entries, dict):
        raise ConfigError(f"{source}: 'llms' must map configuration keys to their settings")
    for key, settings in entries.items():
        key = str(key)
        if not isinstance(settings, dict):
            raise ConfigError(f"{source}: LLM configuration '{key}' must be a mapping of settings")
        if "key" in settings and str(settings["key"]) != key:
            raise ConfigError(f"{source}: LLM configuration '{key}' has a different 'key' inside it")
        try:
            result.configs[key] = LLMConfig.model_validate({**settings, "key": key})
        except ValidationError as exc:
            raise _config_error(source, key, exc) from None
    default = data.get("default_judge")
    if default is not None:
        result.default_judge = str(default)
        result.get(result.default_judge)  # an unknown default is an error now, not at the first row
    return result
