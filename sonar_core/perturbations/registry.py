"""The perturbator registry, filled through the ``register_perturbators`` hook.

Sonar's own perturbators (:mod:`.builtin`, a plugin the plugin manager registers first) register
through the hook, then every loaded plugin's do; a plugin whose hook raises or registers a taken name
is recorded in the plugin manager's failures (``sonar plugins`` shows them) and left out. A run's
evaluators look perturbators up in the run's own plugin manager (``ctx.plugins``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..jsontypes import JsonObject
from ..registry import Registry
from .base import Perturbator

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["perturbators", "available", "get_perturbator", "make_perturbator", "perturb", "perturb_many",
           "perturbator_registry", "builtin_perturbators", "ALIASES"]

#: Other spellings of a registered name (the issue's and fmeval's config spell random upper case apart).
ALIASES = {"random_uppercase": "random_upper_case"}


def _check(name: Any, cls: Any = None) -> str | None:
    """Why ``register(name, cls)`` is not a usable perturbator, or None."""
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        return f"perturbator name {name!r} is not a non-empty name"
    if not (isinstance(cls, type) and issubclass(cls, Perturbator)):
        return f"perturbator '{name}': {cls!r} is not a subclass of sonar_core.perturbations.Perturbator"
    if cls.apply is Perturbator.apply:
        return f"perturbator '{name}': {cls.__name__} does not implement apply()"
    return None


def perturbator_registry() -> Registry[type[Perturbator]]:
    """The registry the ``register_perturbators`` hook fills: ``register(name, PerturbatorClass)``;
    registering one of :data:`ALIASES` is a clash with the name it spells."""
    return Registry("register_perturbators", "perturbator", _check, aliases=ALIASES)


def builtin_perturbators() -> Registry[type[Perturbator]]:
    """A registry of Sonar's own perturbators only, for code with no plugin manager at hand
    (:func:`perturb`, :func:`perturb_many`, bench scripts)."""
    from . import builtin

    registry = perturbator_registry()
    registry.commit(builtin.PLUGIN_NAME, registry.stage(builtin.PLUGIN_NAME, [builtin.register_perturbators]))
    return registry


def _registry(plugins: "Registries | None") -> Registry[type[Perturbator]]:
    return builtin_perturbators() if plugins is None else plugins.registry("register_perturbators")


def perturbators(plugins: "Registries | None" = None) -> dict[str, type[Perturbator]]:
    """Registered perturbator classes by name (sorted): those of ``plugins`` (None: Sonar's own)."""
    return _registry(plugins).entries


def available(plugins: "Registries | None" = None) -> list[str]:
    """Names of the registered perturbators, sorted."""
    return list(perturbators(plugins))


def get_perturbator(name: str, plugins: "Registries | None" = None) -> type[Perturbator]:
    """The class registered as ``name`` (or an alias of it); ConfigError naming the known ones."""
    registry = _registry(plugins)
    cls = registry.get(name)
    if cls is None:
        raise ConfigError(f"unknown perturbator '{name}' (known: {', '.join(registry.entries) or 'none installed'})")
    return cls


def make_perturbator(name: str, params: JsonObject | None = None,
                     plugins: "Registries | None" = None) -> Perturbator:
    """An instance of perturbator ``name`` with validated ``params`` (ParameterError names the bad one)."""
    cls = get_perturbator(name, plugins)
    canonical = ALIASES.get(name, name)
    instance = cls(cls.validate_params(params, canonical))
    instance.name = canonical
    return instance


def perturb(text: str, name: str, seed: int, **params: Any) -> str:
    """``text`` perturbed by perturbator ``name`` with a generator seeded with ``seed``."""
    import numpy as np  # here: a run without perturbations never needs it

    return make_perturbator(name, params).apply(text, np.random.default_rng(seed))


def perturb_many(text: str, name: str, seed: int, n: int, **params: Any) -> list[str]:
    """``n`` perturbed copies of ``text`` drawn one after the other from one generator seeded with ``seed``
    (fmeval's ``num_perturbations`` copies; the first is ``perturb(text, name, seed)``)."""
    import numpy as np  # here: a run without perturbations never needs it

    perturbator = make_perturbator(name, params)
    rng = np.random.default_rng(seed)
    return [perturbator.apply(text, rng) for _ in range(n)]
