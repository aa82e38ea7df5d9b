"""The benchmark registry, filled through the ``register_benchmarks`` hook.

A plugin calls ``register(definition)`` with a :class:`~.definitions.BenchmarkDefinition`, a mapping
of the same shape, or the path of a YAML definition. Sonar's own (the demo's "assistant safety")
come from :mod:`.builtin`, registered before any plugin; a uid registered twice fails the later plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..registry import Registry
from .definitions import BenchmarkDefinition, load_benchmark, parse_benchmark

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["benchmark_registry", "as_definition", "benchmarks", "get_benchmark"]


def as_definition(value: Any) -> BenchmarkDefinition:
    """A registered value as a definition; ConfigError (one line) when it is not one."""
    if isinstance(value, BenchmarkDefinition):
        return value
    if isinstance(value, (str, Path)):
        return load_benchmark(value)
    return parse_benchmark(value, "<registered benchmark>")


def _check(value: Any = None) -> str | None:
    try:
        as_definition(value)
    except ConfigError as exc:
        return f"benchmark: {exc}"
    return None


def _entry(value: Any) -> tuple[str, BenchmarkDefinition]:
    definition = as_definition(value)
    return definition.uid, definition


def benchmark_registry() -> Registry[BenchmarkDefinition]:
    """The registry the ``register_benchmarks`` hook fills: ``register(definition)``, keyed by uid."""
    return Registry("register_benchmarks", "benchmark", _check, entry=_entry)


def benchmarks(plugins: "Registries") -> dict[str, BenchmarkDefinition]:
    """Every registered benchmark by uid (plugins loaded)."""
    return plugins.registry("register_benchmarks").entries


def get_benchmark(plugins: "Registries", uid: str) -> BenchmarkDefinition:
    """The benchmark ``uid``; ConfigError naming the registered ones when there is none."""
    found = plugins.registry("register_benchmarks").get(uid)
    if found is None:
        known = ", ".join(benchmarks(plugins)) or "none"
        raise ConfigError(f"unknown benchmark '{uid}' (registered: {known}; sonar benchmarks lists them)")
    return found
