"""Host kinds (through the ``register_host_kinds`` hook) and building a run's hosts from its configuration.

The built-in kinds (``openai_chat``, ``rag_http``, ``hf_causal_lm``, ``python``) are registered
by :mod:`sonar_core.hosts.builtin`, whose hook implementation runs before the plugins'; a plugin
that registers a kind already taken is an error naming both owners.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, validation_message
from ..llm.secrets import Redactor
from .base import Host, HostService
from .client_host import Price

__all__ = ["HostServices", "host_kinds", "build_hosts", "spec_factory", "BUILT_IN_OWNER"]

BUILT_IN_OWNER = "sonar_core"


@dataclass
class HostServices:
    """What a host factory may use: the run's journal, response cache, device and price table."""

    journal: Any = None
    cache: Any = None
    device: str = "auto"
    base_dir: str | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    redact: Redactor = field(default_factory=Redactor)

    def price_for(self, key: str) -> Price | None:
        return self.prices.get(key)


def spec_factory(spec_model: type[BaseModel], make: Callable[[Any, HostServices], Host]) -> Callable:
    """A factory taking the configuration dict: validates it with ``spec_model``, then calls ``make``."""

    def factory(spec: dict[str, Any], services: HostServices) -> Host:
        try:
            validated = spec_model.model_validate(spec)
        except ValidationError as exc:
            raise ConfigError(validation_message(exc, "setting")) from None
        return make(validated, services)

    # What `sonar hosts` shows: the kind's settings and description.
    factory.spec_model = spec_model  # type: ignore[attr-defined]
    return factory


def host_kinds(plugin_host=None) -> tuple[dict[str, Callable], dict[str, str]]:
    """kind -> factory, and kind -> the plugin that registered it (built-ins first)."""
    from . import builtin

    factories: dict[str, Callable] = {}
    owners: dict[str, str] = {}

    def collect(owner: str, implementation: Callable) -> None:
        def register(kind: str, factory: Callable) -> None:
            if not isinstance(kind, str) or not kind or not callable(factory):
                raise ConfigError(f"plugin '{owner}' registered an invalid host kind {kind!r}")
            if kind in factories:
                raise ConfigError(f"host kind '{kind}' is registered by both plugin '{owners[kind]}' "
                                  f"and plugin '{owner}'")
            factories[kind] = factory
            owners[kind] = owner

        implementation(register=register)

    collect(BUILT_IN_OWNER, builtin.register_host_kinds)
    if plugin_host is not None:
        plugin_host.load()
        for impl in plugin_host.pm.hook.register_host_kinds.get_hookimpls():
            collect(impl.plugin_name, impl.function)
    return factories, owners


def build_hosts(entries: list[dict[str, Any]], services: HostServices, plugin_host=None) -> HostService:
    """The run's hosts, each entry checked (ConfigError naming the entry and the setting)."""
    factories, _ = host_kinds(plugin_host)
    service = HostService()
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
        if service.get(key) is not None:
            raise ConfigError(f"{where}: another host has the key '{key}'")
        try:
            host = factories[kind](dict(entry), services)
        except ConfigError as exc:
            service.close()
            raise ConfigError(f"{where}: {exc}") from None
        if not isinstance(host, Host):
            service.close()
            raise ConfigError(f"{where}: the factory of kind '{kind}' returned {type(host).__name__}, not a Host")
        service.add(host)
    return service


def prices_from(table: dict[str, Any], host_keys: list[str]) -> dict[str, Price]:
    """The price table checked: one entry per host key (ConfigError for an unknown key or setting)."""
    prices = {}
    for key, value in (table or {}).items():
        if key not in host_keys:
            raise ConfigError(f"prices: '{key}' is not a host key (hosts: {', '.join(host_keys) or 'none'})")
        try:
            prices[key] = Price.model_validate(value)
        except ValidationError as exc:
            raise ConfigError(f"prices.{key}: {validation_message(exc, 'setting')}") from None
    return prices


def summary(service: HostService) -> dict[str, Any]:
    """run.json's view of the hosts (settings without secrets, and client counters)."""
    out = {}
    for host in service:
        spec = getattr(host, "spec", None)
        stats = host.stats() if hasattr(host, "stats") else {}
        out[host.key] = {"kind": host.kind, "deterministic": host.deterministic,
                         "settings": spec.model_dump(mode="json") if spec is not None else {}, **stats}
    return out
