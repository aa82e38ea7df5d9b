"""API keys: read from the environment variable a configuration names, and kept out of every output.

A configuration holds only the variable's *name*. The value is read when a client is made and
registered with the :class:`Redactor`, which every text Sonar keeps from an LLM exchange (answers,
error messages, journal events, cached responses) passes through: an endpoint that echoes the key
back cannot make Sonar write it anywhere.
"""

from __future__ import annotations

import os
import threading

from ..errors import ConfigError
from .configs import LLMConfig

__all__ = ["Redactor", "REDACTED", "api_key_for"]

REDACTED = "[REDACTED]"
#: Shorter values are not redacted: replacing every "ab" in every answer would garble it.
_MIN_SECRET = 4


class Redactor:
    """Replaces every registered secret value in a text."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, value: str | None) -> None:
        if value and len(value) >= _MIN_SECRET:
            with self._lock:
                self._secrets.add(value)

    def __call__(self, text: str | None) -> str | None:
        if not text or not self._secrets:
            return text
        # Longest first, so a secret that contains another is replaced whole.
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text


def api_key_for(config: LLMConfig) -> str | None:
    """The API key of ``config`` from its environment variable; None when it names none.

    Raises ConfigError (naming the variable, never a value) when the variable is unset. A cache-only
    process (``sonar replay``: :data:`~.cache.CACHE_ONLY_ENV`) asks nothing, so it never reads the
    variable: the recipient of an evidence pack has no key and needs none.
    """
    from .cache import CACHE_ONLY_ENV

    if not config.api_key_env or os.environ.get(CACHE_ONLY_ENV) == "1":
        return None
    value = os.environ.get(config.api_key_env)
    if not value:
        raise ConfigError(f"LLM configuration '{config.key}': environment variable {config.api_key_env} "
                          f"(its API key) is not set")
    return value
