"""``hf_causal_lm``: a local causal LM from the model store (a known name, a folder, a cached HF id).

The model is loaded once per process by the store; prompts go through the tokenizer's chat
template. With a temperature above 0 each answer is sampled with a seed derived from the request
(its prompt, sampling settings and repeat index), so a cached, resumed or repeated run gives the
same answer for the same item and repeat.
"""

from __future__ import annotations

from pydantic import Field

from ..errors import ConfigError
from ..llm.backends import LocalCausalLMBackend
from ..llm.configs import LLMConfig
from .client_host import ClientHost, HostSpec

__all__ = ["HFCausalLMSpec", "make_hf_causal_lm_host"]


class HFCausalLMSpec(HostSpec):
    """A causal LM from the model store on this machine, with its chat template; seeded sampling when
    temperature > 0."""

    model: str
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=64, ge=1)
    system_prompt: str = ""
    #: ``auto`` follows the run's ``device`` setting.
    device: str = "auto"
    # One generation at a time: the model has the CPU or GPU to itself.
    max_concurrency: int = Field(default=1, ge=1)
    retries: int = Field(default=0, ge=0)
    timeout: float = Field(default=600.0, gt=0)


def make_hf_causal_lm_host(spec: HFCausalLMSpec, services) -> ClientHost:
    from ..extras import missing_modules, missing_reason

    # On the base install (no torch) the run stops before it starts, naming the extra to install,
    # rather than failing every item the host is asked.
    if missing := missing_modules(("torch", "transformers")):
        raise ConfigError(f"host kind 'hf_causal_lm' {missing_reason('models', missing)}")
    device = services.device if spec.device == "auto" else spec.device
    config = LLMConfig(key=spec.key, backend="local", model=spec.model, temperature=spec.temperature,
                       max_tokens=spec.max_tokens, timeout=spec.timeout, retries=spec.retries, backoff=spec.backoff,
                       max_concurrency=spec.max_concurrency, device=device, description=spec.description)
    identity = {**config.identity(), "system_prompt": spec.system_prompt}
    return ClientHost(spec, backend=LocalCausalLMBackend(config), config=config, identity=identity,
                      services=services, deterministic=spec.temperature == 0, system_prompt=spec.system_prompt)
