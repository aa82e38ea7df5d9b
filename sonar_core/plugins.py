"""Plugin discovery and the plugin manager, which fills every registry (evaluators, host kinds,
perturbators, benchmarks, attack sets, techniques).

Plugins come from the ``sonar.plugins`` entry-point group (built-ins included) and from
modules named explicitly (``sonar run -p my.module``). They load once, on first use, never
at import time. Two environment variables steer autoloading:

``SONAR_PLUGINS``
    comma-separated entry-point names; only those load (built-ins are entry points too).
``SONAR_DISABLE_PLUGIN_AUTOLOAD``
    any non-empty value: no entry point loads; only modules named with ``-p`` do.

A plugin that fails to import or to register (its hook raises, it registers a bad entry or a name
another plugin holds, in any registry) is recorded in :attr:`PluginManager.failures`,
shown by ``sonar plugins`` and written to the run journal, and skipped; under ``strict`` it
is an error.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import threading
from dataclasses import dataclass, field
from typing import Iterable

import pluggy

from . import hookspecs
from .contract import Evaluator
from .errors import ConfigError, PluginError
from .registry import Registry

__all__ = ["PluginManager", "PluginInfo", "PluginFailure", "ENTRY_POINT_GROUP", "BUILT_IN_PLUGINS",
           "evaluator_registry", "get_plugin_manager"]

ENTRY_POINT_GROUP = "sonar.plugins"
ENV_ONLY = "SONAR_PLUGINS"
ENV_DISABLE_AUTOLOAD = "SONAR_DISABLE_PLUGIN_AUTOLOAD"


@dataclass
class PluginInfo:
    """A loaded plugin: its name, distribution, version, hooks and evaluators."""

    name: str
    module: str
    distribution: str = ""
    version: str = ""
    hooks: list[str] = field(default_factory=list)
    evaluators: list[str] = field(default_factory=list)


@dataclass
class PluginFailure:
    """A plugin that could not be loaded or could not register."""

    name: str
    stage: str  # "import" or "register"
    error: str

    def message(self) -> str:
        return f"plugin '{self.name}' failed to {self.stage}: {self.error}"


def _one_line(exc: BaseException) -> str:
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if isinstance(exc, pluggy.PluginValidationError):
        # pluggy puts the reason (e.g. "Argument(s) {'reg'} ... can not be found in the
        # hookspec") on its last line; keeping only the first would drop it.
        return f"{type(exc).__name__}: {'; '.join(text)}"
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _check_declaration(cls: type) -> str | None:
    """Why ``cls`` is not a usable evaluator declaration, or None."""
    if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
        return f"{cls!r} is not a subclass of sonar_core.Evaluator"
    return cls.declaration_problem()


def _evaluator_entry(cls: type[Evaluator]) -> tuple[str, type[Evaluator]]:
    return cls.id, cls


def evaluator_registry() -> Registry[type[Evaluator]]:
    """The registry the ``register_evaluators`` hook fills: ``register(EvaluatorClass)``, keyed by id."""
    return Registry("register_evaluators", "evaluator id", _check_declaration, entry=_evaluator_entry)


def _registries() -> list[Registry]:
    # The services' registries are declared next to their services; imported here, when a
    # manager is made, so that importing this module stays light.
    from .hosts.registry import host_kind_registry
    from .perturbations.registry import perturbator_registry
    from .benchmarks.registry import benchmark_registry
    from .redteam.registry import attack_set_registry, technique_registry

    return [evaluator_registry(), host_kind_registry(), perturbator_registry(), benchmark_registry(),
            attack_set_registry(), technique_registry()]


#: Sonar's own host kinds and perturbators: modules registered before any plugin, as plugins are,
#: under their ``PLUGIN_NAME`` (which `sonar hosts` and clash messages show); not listed among the
#: loaded plugins (`sonar plugins`, run.json).
BUILT_IN_PLUGINS = ("sonar_core.hosts.builtin", "sonar_core.perturbations.builtin", "sonar_core.benchmarks.builtin",
                    "sonar_core.redteam.builtin")


class PluginManager:
    """The run's plugins: owns the pluggy manager and every registry; loads plugins lazily, once.

    Each ``register_*`` hook fills one :class:`sonar_core.registry.Registry` (evaluators, host
    kinds, perturbators), reached with :meth:`registry`; Sonar's built-in host kinds and
    perturbators are plugins registered first (:data:`BUILT_IN_PLUGINS`).
    """

    def __init__(self, extra_modules: Iterable[str] = (), autoload: bool | None = None) -> None:
        self.extra_modules = list(extra_modules)
        self.autoload = autoload
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.failures: list[PluginFailure] = []
        self._registries: dict[str, Registry] = {}
        self._loaded = False
        self._lock = threading.RLock()

    # -- loading ------------------------------------------------------------------------

    def _entry_points(self) -> list[metadata.EntryPoint]:
        autoload = self.autoload if self.autoload is not None else not os.environ.get(ENV_DISABLE_AUTOLOAD)
        if not autoload:
            return []
        points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
        only = os.environ.get(ENV_ONLY)
        if only is not None:
            wanted = {name.strip() for name in only.split(",") if name.strip()}
            installed = sorted({ep.name for ep in points})
            # A misspelt name must not silently load nothing: report it like a plugin that failed.
            for missing in sorted(wanted.difference(installed)):
                self.failures.append(PluginFailure(
                    missing, "import",
                    f"{ENV_ONLY} names '{missing}', but no installed distribution has a '{ENTRY_POINT_GROUP}' "
                    f"entry point of that name (installed: {', '.join(installed) or 'none'})"))
            points = [ep for ep in points if ep.name in wanted]
        # Deduplicate: an editable install can expose the same distribution twice.
        unique: dict[str, metadata.EntryPoint] = {}
        for ep in points:
            unique.setdefault(ep.name, ep)
        return sorted(unique.values(), key=lambda ep: ep.name)

    def load(self) -> "PluginManager":
        """Import and register every plugin once (built-ins first); later calls do nothing."""
        with self._lock:
            if self._loaded:
                return self
            self._loaded = True
            self._registries = {registry.hook: registry for registry in _registries()}
            for module_name in BUILT_IN_PLUGINS:
                module = importlib.import_module(module_name)
                self._register(module.PLUGIN_NAME, module, info=None)
            candidates: list[tuple[str, str, str, str, object]] = []
            for ep in self._entry_points():
                dist = getattr(ep, "dist", None)
                try:
                    obj = ep.load()
                except Exception as exc:  # a broken plugin must not take the run down
                    self.failures.append(PluginFailure(ep.name, "import", _one_line(exc)))
                    continue
                candidates.append((ep.name, ep.value, dist.name if dist else "", dist.version if dist else "", obj))
            for module_name in self.extra_modules:
                try:
                    obj = importlib.import_module(module_name)
                except Exception as exc:
                    self.failures.append(PluginFailure(module_name, "import", _one_line(exc)))
                    continue
                candidates.append((module_name, module_name, "", "", obj))
            for name, module, dist, version, obj in candidates:
                self._register(name, obj, PluginInfo(name=name, module=module, distribution=dist, version=version))
        return self

    def register_plugin(self, obj: object, name: str) -> bool:
        """Register one more plugin object (after :meth:`load`) as a loaded plugin; False when it failed
        (recorded in :attr:`failures`)."""
        self.load()
        with self._lock:
            return self._register(name, obj, PluginInfo(name=name, module=getattr(obj, "__module__", "") or ""))

    def _register(self, name: str, obj: object, info: PluginInfo | None) -> bool:
        """Register ``obj`` with pluggy and stage its entries in every registry; add them only when all
        registries accept it. ``info`` None: a built-in, not listed among :attr:`plugins`."""
        try:
            self.pm.register(obj, name=name)
            # A misspelt hook name fails loudly instead of being silently ignored.
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.is_registered(obj):
                self.pm.unregister(obj)
            self.failures.append(PluginFailure(name, "register", _one_line(exc)))
            return False
        callers = self.pm.get_hookcallers(obj) or []
        staged = []
        try:
            for registry in self._registries.values():
                # Only functions pluggy accepted as implementations of the hook run (marked with
                # @hookimpl, possibly under another name via specname), one plugin at a time so each
                # entry is attributed to its plugin.
                implementations = [impl.function for caller in callers if caller.name == registry.hook
                                   for impl in caller.get_hookimpls() if impl.plugin is obj]
                if implementations:
                    staged.append((registry, registry.stage(name, implementations)))
        except Exception as exc:  # a broken plugin must not take the run down
            self.pm.unregister(obj)
            self.failures.append(PluginFailure(name, "register", _one_line(exc)))
            return False
        for registry, entries in staged:
            registry.commit(name, entries)
        if info is not None:
            info.hooks = sorted(caller.name for caller in callers)
            info.evaluators = [key for registry, entries in staged if registry.hook == "register_evaluators"
                               for key, _ in entries]
            self.plugins.append(info)
        return True

    def registry(self, hook: str) -> Registry:
        """The registry the hook ``hook`` fills (``register_perturbators``), plugins loaded."""
        self.load()
        return self._registries[hook]

    # -- the registry -------------------------------------------------------------------

    @property
    def evaluators(self) -> dict[str, type[Evaluator]]:
        """Registered evaluator classes by id, sorted by id."""
        return self.registry("register_evaluators").entries

    def owner_of(self, evaluator_id: str) -> str:
        """The plugin that registered the evaluator ``evaluator_id``."""
        owner = self.registry("register_evaluators").owner(evaluator_id)
        if owner is None:
            raise KeyError(evaluator_id)
        return owner

    def resolve(self, name: str) -> type[Evaluator]:
        """The evaluator class for an id or a qualified ``module.Class`` name."""
        evaluators = self.evaluators
        if name in evaluators:
            return evaluators[name]
        for cls in evaluators.values():
            if cls.qualified_name() == name:
                return cls
        known = ", ".join(evaluators) or "none installed"
        raise ConfigError(f"unknown evaluator id '{name}' (known: {known})")

    def raise_for_failures(self) -> None:
        """Strict mode: the first plugin failure becomes an error."""
        self.load()
        if self.failures:
            raise PluginError(self.failures[0].message())


_MANAGER: PluginManager | None = None


def get_plugin_manager(extra_modules: Iterable[str] = ()) -> PluginManager:
    """The process-wide plugin manager, or a fresh one when extra plugin modules are named.

    For the surface (CLI, API) and module-level helpers only: evaluators use the run's own
    manager, ``ctx.plugins``.
    """
    global _MANAGER
    extra = list(extra_modules)
    if extra:
        return PluginManager(extra_modules=extra)
    if _MANAGER is None:
        _MANAGER = PluginManager()
    return _MANAGER

