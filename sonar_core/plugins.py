"""Plugin discovery and the evaluator registry.

Plugins come from the ``sonar.plugins`` entry-point group (built-ins included) and from
modules named explicitly (``sonar run -p my.module``). They load once, on first use, never
at import time. Two environment variables steer autoloading:

``SONAR_PLUGINS``
    comma-separated entry-point names; only those load (built-ins are entry points too).
``SONAR_DISABLE_PLUGIN_AUTOLOAD``
    any non-empty value: no entry point loads; only modules named with ``-p`` do.

A plugin that fails to import or to register is recorded in :attr:`PluginHost.failures`,
shown by ``sonar plugins`` and written to the run journal, and skipped; under ``strict`` it
is an error.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
from dataclasses import dataclass, field
from typing import Iterable

import pluggy

from . import hookspecs
from .contract import Evaluator
from .errors import ConfigError, PluginError

__all__ = ["PluginHost", "PluginInfo", "PluginFailure", "ENTRY_POINT_GROUP", "get_host"]

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


class PluginHost:
    """Owns the pluggy manager and the evaluator registry; loads plugins lazily."""

    def __init__(self, extra_modules: Iterable[str] = (), autoload: bool | None = None) -> None:
        self.extra_modules = list(extra_modules)
        self.autoload = autoload
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.failures: list[PluginFailure] = []
        self._evaluators: dict[str, type[Evaluator]] = {}
        self._owner: dict[str, str] = {}
        self._loaded = False

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

    def load(self) -> "PluginHost":
        """Import and register every plugin once; later calls do nothing."""
        if self._loaded:
            return self
        self._loaded = True
        candidates: list[tuple[str, str, str, str, object]] = []
        for ep in self._entry_points():
            dist = getattr(ep, "dist", None)
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plugin must not take the host down
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
            self._register_plugin(name, module, dist, version, obj)
        return self

    def _register_plugin(self, name: str, module: str, dist: str, version: str, obj: object) -> None:
        try:
            self.pm.register(obj, name=name)
            # A misspelt hook name fails loudly instead of being silently ignored.
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.is_registered(obj):
                self.pm.unregister(obj)
            self.failures.append(PluginFailure(name, "register", _one_line(exc)))
            return
        info = PluginInfo(name=name, module=module, distribution=dist, version=version)
        info.hooks = sorted(impl.name for impl in self.pm.get_hookcallers(obj) or [])
        staged: list[type[Evaluator]] = []

        def register(cls: type) -> None:
            problem = _check_declaration(cls)
            if problem:
                raise PluginError(problem)
            staged.append(cls)

        # Only functions pluggy accepted as implementations of the hook run (marked with
        # @hookimpl, possibly under another name via specname), one plugin at a time so each
        # registration is attributed to its plugin.
        impls = [impl for caller in self.pm.get_hookcallers(obj) or [] if caller.name == "register_evaluators"
                 for impl in caller.get_hookimpls() if impl.plugin is obj]
        if impls:
            try:
                for impl in impls:
                    impl.function(register=register)
                for cls in staged:
                    if cls.id in self._evaluators:
                        raise PluginError(
                            f"evaluator id '{cls.id}' is registered by both plugin "
                            f"'{self._owner[cls.id]}' and plugin '{name}'"
                        )
            except Exception as exc:
                self.pm.unregister(obj)
                self.failures.append(PluginFailure(name, "register", _one_line(exc)))
                return
        for cls in staged:
            self._evaluators[cls.id] = cls
            self._owner[cls.id] = name
            info.evaluators.append(cls.id)
        self.plugins.append(info)

    # -- the registry -------------------------------------------------------------------

    @property
    def evaluators(self) -> dict[str, type[Evaluator]]:
        """Registered evaluator classes by id, sorted by id."""
        self.load()
        return dict(sorted(self._evaluators.items()))

    def owner_of(self, evaluator_id: str) -> str:
        self.load()
        return self._owner[evaluator_id]

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


_HOST: PluginHost | None = None


def get_host(extra_modules: Iterable[str] = ()) -> PluginHost:
    """The process-wide host, or a fresh one when extra plugin modules are named."""
    global _HOST
    extra = list(extra_modules)
    if extra:
        return PluginHost(extra_modules=extra)
    if _HOST is None:
        _HOST = PluginHost()
    return _HOST

