"""Host kinds (through the ``register_host_kinds`` hook) and building a run's hosts from its configuration.

The built-in kinds (``openai_chat``, ``rag_http``, ``hf_causal_lm``, ``python``) are registered
by :mod:`sonar_core.hosts.builtin`, a plugin the plugin manager registers before any other; a plugin
that registers a kind already taken fails (a plugin failure naming both owners) and adds no kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypedDict

from pydantic import ValidationError

from ..errors import ConfigError, validation_message
from ..jsontypes import JsonObject
from ..registry import Registry
from .base import Host, HostPool
from .client_host import Price
from .factory import HostFactoryServices

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["host_kind_registry", "host_kinds", "build_hosts", "builtin_host_kinds"]


def _check_kind(kind: Any, factory: Any = None) -> str | None:
    """Why ``register(kind, factory)`` is not a usable host kind, or None."""
    if not isinstance(kind, str) or not kind.strip() or kind != kind.strip():
        return f"host kind {kind!r} is not a non-empty name"
    if not callable(factory):
        return f"host kind '{kind}': {factory!r} is not callable (a factory(spec, services) -> Host)"
    return None


def host_kind_registry() -> Registry[Callable]:
    """The registry the ``register_host_kinds`` hook fills: ``register(kind, factory)``."""
    return Registry("register_host_kinds", "host kind", _check_kind)


def host_kinds(plugins: "Registries | None" = None) -> tuple[dict[str, Callable], dict[str, str]]:
    """kind -> factory, and kind -> the plugin that registered it (built-ins first); ``plugins`` None:
    Sonar's built-in kinds only."""
    registry = builtin_host_kinds() if plugins is None else plugins.registry("register_host_kinds")
    return registry.entries, registry.owners


def builtin_host_kinds() -> Registry[Callable]:
    """A registry of Sonar's own host kinds only, for code with no plugin manager at hand."""
    from . import builtin

    registry = host_kind_registry()
    registry.commit(builtin.PLUGIN_NAME, registry.stage(builtin.PLUGIN_NAME, [builtin.register_host_kinds]))
    return registry


def build_hosts(entries: list[JsonObject], services: HostFactoryServices,
                plugins: "Registries | None" = None) -> HostPool:
    """The run's hosts, each entry checked (ConfigError naming the entry and the setting); their kinds
    are those ``plugins`` registers (None: Sonar's built-in kinds only)."""
    factories, _ = host_kinds(plugins)
    pool = HostPool()
    for position, entry in enumerate(entries):
        where = f"hosts[{position}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a mapping with 'key' and 'kind'")
        key, kind = entry.get("key"), entry.get("kind")
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"{where}: missing required setting 'key'")
        where = f"{where} (key '{key}')"
        if kind not in factories:
            raise ConfigError(f"{where}: unknown host kind {kind!r} (known: {', '.join(sorted(factories))})")
        if pool.get(key) is not None:
            raise ConfigError(f"{where}: another host has the key '{key}'")
        try:
            host = factories[kind](dict(entry), services)
        except ConfigError as exc:
            pool.close()
            raise ConfigError(f"{where}: {exc}") from None
        if not isinstance(host, Host):
            pool.close()
            raise ConfigError(f"{where}: the factory of kind '{kind}' returned {type(host).__name__}, not a Host")
        pool.add(host)
    return pool


def prices_from(table: dict[str, JsonObject], host_keys: list[str], judge_keys: list[str] | None = None) -> dict[str, Price]:
    """The price table checked: one entry per host key or, with ``judge_keys``, LLM (judge) configuration
    key (ConfigError for an unknown key or setting)."""
    prices = {}
    for key, value in (table or {}).items():
        if key not in host_keys and key not in (judge_keys or ()):
            if judge_keys is None:
                raise ConfigError(f"prices: '{key}' is not a host key (hosts: {', '.join(host_keys) or 'none'})")
            raise ConfigError(f"prices: '{key}' is neither a host key nor a judge configuration key (hosts: "
                              f"{', '.join(host_keys) or 'none'}; judges: {', '.join(judge_keys) or 'none'})")
        try:
            prices[key] = Price.model_validate(value)
        except ValidationError as exc:
            raise ConfigError(f"prices.{key}: {validation_message(exc, 'setting')}") from None
    return prices


def _settings(spec: Any) -> JsonObject:
    """A host's settings for run.json: ``adaptive_concurrency`` only when turned off (a default run's
    run.json is as it was before the setting existed)."""
    return spec.model_dump(mode="json", exclude={"adaptive_concurrency"} if getattr(spec, "adaptive_concurrency",
                                                                                   False) else None)


class HostSummary(TypedDict):
    """run.json's entry of one host: its kind and settings (no secret), then, for a host that asks
    through an LLM client, that client's counters (:class:`~sonar_core.llm.requests.ClientCounts`)."""
    kind: str
    deterministic: bool
    settings: JsonObject


def summary(pool: HostPool) -> dict[str, HostSummary]:
    """run.json's view of the hosts (settings without secrets, and client counters)."""
    out: dict[str, HostSummary] = {}
    for host in pool:
        spec = getattr(host, "spec", None)
        stats = host.stats() if hasattr(host, "stats") else {}
        out[host.key] = {"kind": host.kind, "deterministic": host.deterministic,
                         "settings": _settings(spec) if spec is not None else {}, **stats}
    return out
