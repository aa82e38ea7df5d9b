"""The perturbator registry, filled through the ``register_perturbators`` hook.

Sonar's own perturbators (:mod:`.builtin`) register through the hook first, then every loaded plugin's
do; a plugin whose hook raises or registers a taken name is recorded in the plugin host's failures
(``sonar plugins`` shows them) and its perturbators are left out.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigError, PluginError
from .base import Perturbator

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins import PluginHost

__all__ = ["perturbators", "available", "get_perturbator", "make_perturbator", "perturb", "perturb_many",
           "ALIASES"]

#: Other spellings of a registered name (the issue's and fmeval's config spell random upper case apart).
ALIASES = {"random_uppercase": "random_upper_case"}

_REGISTRIES: "weakref.WeakKeyDictionary[PluginHost, dict[str, type[Perturbator]]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _check(name: Any, cls: Any) -> str | None:
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        return f"perturbator name {name!r} is not a non-empty name"
    if not (isinstance(cls, type) and issubclass(cls, Perturbator)):
        return f"perturbator '{name}': {cls!r} is not a subclass of sonar_core.perturbations.Perturbator"
    if cls.apply is Perturbator.apply:
        return f"perturbator '{name}': {cls.__name__} does not implement apply()"
    return None


def _collect(host: "PluginHost") -> dict[str, type[Perturbator]]:
    from ..plugins import PluginFailure
    from . import builtin

    host.load()
    if not host.pm.is_registered(builtin):
        host.pm.register(builtin, name=builtin.PLUGIN_NAME)
    impls = host.pm.hook.register_perturbators.get_hookimpls()
    # Built-ins first, so a plugin cannot take one of their names; then plugins in load order.
    impls.sort(key=lambda impl: impl.plugin is not builtin)
    registry: dict[str, type[Perturbator]] = {}
    owner: dict[str, str] = {}
    for impl in impls:
        staged: list[tuple[str, type[Perturbator]]] = []

        def register(name: str, cls: type) -> None:
            problem = _check(name, cls)
            if problem:
                raise PluginError(problem)
            staged.append((name, cls))

        try:
            impl.function(register=register)
            for name, _ in staged:
                if name in registry or name in ALIASES:
                    raise PluginError(f"perturbator '{name}' is registered by both plugin "
                                      f"'{owner.get(name, builtin.PLUGIN_NAME)}' and plugin '{impl.plugin_name}'")
        except Exception as exc:  # a broken plugin must not take the run down
            text = str(exc).strip().splitlines()
            host.failures.append(PluginFailure(impl.plugin_name, "register",
                                               f"{type(exc).__name__}: {text[0] if text else ''}"))
            continue
        for name, cls in staged:
            registry[name] = cls
            owner[name] = impl.plugin_name
    return dict(sorted(registry.items()))


def perturbators(host: "PluginHost | None" = None) -> dict[str, type[Perturbator]]:
    """Registered perturbator classes by name (sorted), collected once per plugin host."""
    if host is None:
        from ..plugins import get_host

        host = get_host()
    with _LOCK:
        found = _REGISTRIES.get(host)
        if found is None:
            found = _REGISTRIES[host] = _collect(host)
    return found


def available(host: "PluginHost | None" = None) -> list[str]:
    """Names of the registered perturbators, sorted."""
    return list(perturbators(host))


def get_perturbator(name: str, host: "PluginHost | None" = None) -> type[Perturbator]:
    """The class registered as ``name`` (or an alias of it); ConfigError naming the known ones."""
    known = perturbators(host)
    cls = known.get(ALIASES.get(name, name))
    if cls is None:
        raise ConfigError(f"unknown perturbator '{name}' (known: {', '.join(known) or 'none installed'})")
    return cls


def make_perturbator(name: str, params: dict[str, Any] | None = None,
                     host: "PluginHost | None" = None) -> Perturbator:
    """An instance of perturbator ``name`` with validated ``params`` (ParameterError names the bad one)."""
    cls = get_perturbator(name, host)
    canonical = ALIASES.get(name, name)
    instance = cls(cls.validate_params(params, canonical))
    instance.name = canonical
    return instance


def perturb(text: str, name: str, seed: int, **params: Any) -> str:
    """``text`` perturbed by perturbator ``name`` with a generator seeded with ``seed``."""
    return make_perturbator(name, params).apply(text, np.random.default_rng(seed))


def perturb_many(text: str, name: str, seed: int, n: int, **params: Any) -> list[str]:
    """``n`` perturbed copies of ``text`` drawn one after the other from one generator seeded with ``seed``
    (fmeval's ``num_perturbations`` copies; the first is ``perturb(text, name, seed)``)."""
    perturbator = make_perturbator(name, params)
    rng = np.random.default_rng(seed)
    return [perturbator.apply(text, rng) for _ in range(n)]
