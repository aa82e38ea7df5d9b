"""One LLM client for the whole core: configurations, backends, the response cache, pacing and retries.

Judges (``ctx.judge(key)``) and, later, model hosts all go through :class:`LLMClient`. See
docs/judges.md for the configuration file, the cache and the journal events.
"""

from .cache import ResponseCache, default_cache_path, request_key
from .client import ANNOTATOR_EVENTS, SUT_EVENTS, ClientEvents, Completion, LLMClient, LLMRequest
from .configs import BUILT_IN_CONFIGS, DEFAULT_JUDGE, LLMConfig, LLMConfigSet, default_configs_path, load_llm_configs
from .rate_limit import RateLimiter, RetryPolicy
from .secrets import REDACTED, Redactor
from .service import LLMService

__all__ = [
    "ANNOTATOR_EVENTS",
    "ClientEvents",
    "SUT_EVENTS",
    "BUILT_IN_CONFIGS",
    "Completion",
    "DEFAULT_JUDGE",
    "LLMClient",
    "LLMConfig",
    "LLMConfigSet",
    "LLMRequest",
    "LLMService",
    "REDACTED",
    "RateLimiter",
    "Redactor",
    "ResponseCache",
    "RetryPolicy",
    "default_cache_path",
    "default_configs_path",
    "load_llm_configs",
    "request_key",
]
