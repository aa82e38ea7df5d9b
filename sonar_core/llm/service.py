"""The run's LLM service: configurations, the response cache and one client per configuration.

The runner makes one :class:`LLMService` per run and hands it to every evaluator's context;
``ctx.judge(key)`` returns the shared client of that configuration, so every evaluator of the run
shares one concurrency bound and one rate limit per LLM. Nothing is opened until the first client
is asked for: a run without judges creates no cache file.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TypedDict

from ..errors import ConfigError
from .backends import PermanentError, make_backend
from .cache import CacheMode, ResponseCache, default_cache_path
from .client import LLMClient
from ..jsontypes import JsonObject
from .configs import DEFAULT_JUDGE, LLMConfig, LLMConfigSet
from .requests import ClientCounts
from .secrets import Redactor, api_key_for

__all__ = ["LLMService", "LLMSummary"]


class CacheSummary(TypedDict):
    path: str
    mode: str


class UsedConfig(ClientCounts):
    """One configuration a run used: its settings (as ``sonar judges`` shows them) and its counters."""
    config: JsonObject


class LLMSummary(TypedDict):
    """run.json's ``llm``: the configurations file, the default judge, the cache, every configuration used."""
    configs_file: str | None
    default_judge: str
    cache: CacheSummary
    used: dict[str, UsedConfig]


class LLMService:
    """Configurations, cache and clients of one run."""

    def __init__(
        self,
        configs: LLMConfigSet | None = None,
        *,
        default_judge: str | None = None,
        cache_path: Path | None = None,
        cache_mode: CacheMode = "use",
        fresh_since: float | None = None,
        journal=None,
        cache: ResponseCache | None = None,
    ) -> None:
        """
        Args:
            configs: the configurations (built-ins only when None).
            default_judge: the run's default judge; else the file's, else ``local-smollm2``.
            cache_path: the response cache file; None means :func:`default_cache_path`.
            cache_mode: ``use``, ``refresh`` or ``off``.
            fresh_since: Unix time the run started (``refresh`` keeps what the run itself fetched).
            journal: the run journal, or None.
            cache: a cache object to use instead of opening ``cache_path`` (a Ray worker's, which reads
                through the driver and hands its writes back to it).
        """
        self.configs = configs or LLMConfigSet()
        self.default_judge = default_judge or self.configs.default_judge or DEFAULT_JUDGE
        self.cache_path = Path(cache_path) if cache_path is not None else default_cache_path()
        self.cache_mode = cache_mode
        self.fresh_since = fresh_since
        self.journal = journal
        self.redact = Redactor()
        self._cache: ResponseCache | None = cache
        self._clients: dict[str, LLMClient] = {}
        #: The run's cost ledger (:mod:`.ledger`), handed to every client made; None: no accounting.
        self.ledger = None
        self._lock = threading.Lock()

    def attach(self, journal) -> None:
        """Send this service's events (and its clients') to ``journal`` from now on."""
        with self._lock:
            self.journal = journal
            for client in self._clients.values():
                client.journal = journal

    def config(self, key: str) -> LLMConfig:
        return self.configs.get(key)

    def judge_key(self, requested: str | None) -> str:
        """The configuration key a judge evaluator uses: its parameter, else the run's default."""
        key = requested.strip() if requested and requested.strip() else self.default_judge
        self.configs.get(key)
        return key

    @property
    def cache(self) -> ResponseCache | None:
        with self._lock:
            return self._open_cache()

    def _open_cache(self) -> ResponseCache | None:
        if self._cache is None and self.cache_mode != "off":
            self._cache = ResponseCache(self.cache_path, self.cache_mode, self.fresh_since)
        return self._cache

    def client(self, key: str) -> LLMClient:
        """The shared client of configuration ``key`` (ConfigError for an unknown key or unset API key)."""
        with self._lock:
            if key not in self._clients:
                config = self.configs.get(key)
                api_key = api_key_for(config)
                self.redact.add(api_key)
                self._clients[key] = LLMClient(config, api_key=api_key, cache=self._open_cache(),
                                               journal=self.journal, redact=self.redact)
                self._clients[key].ledger = self.ledger
            return self._clients[key]

    def unavailable(self, key: str) -> str | None:
        """Why configuration ``key`` cannot be used (no API key, no model), or None; makes no call."""
        config = self.configs.get(key)
        try:
            api_key = api_key_for(config)
        except ConfigError as exc:
            return str(exc)
        # A backend alone, not a client: a check must not create the cache file.
        backend = make_backend(config, api_key)
        try:
            backend.check()
        except PermanentError as exc:
            return f"judge '{config.key}' is not available: {self.redact(str(exc))}"
        finally:
            backend.close()
        return None

    def summary(self) -> LLMSummary:
        """What run.json records: the cache and, per configuration used, its settings and counters."""
        return {
            "configs_file": str(self.configs.source) if self.configs.source else None,
            "default_judge": self.default_judge,
            "cache": {"path": str(self.cache_path), "mode": self.cache_mode},
            "used": {key: {"config": client.config.public(), **client.stats.as_dict()}
                     for key, client in sorted(self._clients.items())},
        }

    def used_cache_keys(self) -> tuple[set[str], set[str]] | None:
        """The response and row-result keys this run read or wrote; None when it never opened the cache."""
        with self._lock:
            if self._cache is None:
                return None
            return set(self._cache.used), set(self._cache.used_rows)

    def close(self) -> None:
        """Journal ``cache info`` (when the cache was opened) and release clients and cache."""
        with self._lock:
            for client in self._clients.values():
                client.close()
            if self._cache is not None:
                if self.journal is not None:
                    for fields in self._cache.info():
                        self.journal.event("cache info", "LLMService", "close", **fields)
                self._cache.close()
                self._cache = None
