"""The attack-set and technique registries, filled through ``register_attack_sets`` and ``register_techniques``.

Sonar's own (the bundled corpus and the built-in techniques, :mod:`.builtin`) register first, as a plugin
does; a plugin registers more. A set is registered as an :class:`~.attacks.AttackSet` or the path of an
attack file; a technique as ``register(name, TechniqueClass)``. A bad entry or a name another plugin holds
fails the plugin (``sonar plugins`` shows it), as for every registry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SonarError
from ..registry import Registry
from .attacks import AttackSet, load_attack_file
from .techniques import ENCODING, MULTI_TURN, WRAPPER, Technique

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["DIRECT", "attack_set_registry", "technique_registry", "builtin_redteam", "attack_sets", "techniques",
           "get_attack_set", "get_technique"]

#: The technique name of a base attack sent as it is (reserved: no plugin may register it).
DIRECT = "direct"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _as_set(value: Any) -> AttackSet:
    if isinstance(value, AttackSet):
        return value
    if isinstance(value, (str, Path)):
        return load_attack_file(value)
    raise ConfigError(f"{value!r} is neither an AttackSet nor the path of an attack file")


def _check_set(value: Any = None) -> str | None:
    try:
        attack_set = _as_set(value)
    except SonarError as exc:
        return f"attack set: {exc}"
    if not attack_set.name or not attack_set.attacks:
        return "attack set: a set needs a name and at least one attack"
    return None


def _set_entry(value: Any) -> tuple[str, AttackSet]:
    attack_set = _as_set(value)
    return attack_set.name, attack_set


def _check_technique(name: Any, cls: Any = None) -> str | None:
    if not isinstance(name, str) or not _NAME.match(name) or name == DIRECT:
        return f"technique name {name!r} must be lower-case letters, digits and '_' (and not '{DIRECT}')"
    if not (isinstance(cls, type) and issubclass(cls, Technique)):
        return f"technique '{name}': {cls!r} is not a subclass of sonar_core.redteam.Technique"
    if cls.kind not in (WRAPPER, ENCODING, MULTI_TURN):
        return f"technique '{name}': kind {cls.kind!r} is not one of {WRAPPER}, {ENCODING}, {MULTI_TURN}"
    if cls.kind == MULTI_TURN and cls.scenario is Technique.scenario:
        return f"technique '{name}': a multi-turn technique implements scenario()"
    if cls.kind != MULTI_TURN and cls.apply is Technique.apply:
        return f"technique '{name}': {cls.__name__} does not implement apply()"
    return None


def attack_set_registry() -> Registry[AttackSet]:
    """The registry ``register_attack_sets`` fills: ``register(set_or_path)``, keyed by the set's name."""
    return Registry("register_attack_sets", "attack set", _check_set, entry=_set_entry)


def technique_registry() -> Registry[type[Technique]]:
    """The registry ``register_techniques`` fills: ``register(name, TechniqueClass)``."""
    return Registry("register_techniques", "technique", _check_technique)


def builtin_redteam() -> tuple[Registry[AttackSet], Registry[type[Technique]]]:
    """Registries holding Sonar's own sets and techniques only (for code with no plugin manager: bench scripts)."""
    from . import builtin

    sets, kinds = attack_set_registry(), technique_registry()
    sets.commit(builtin.PLUGIN_NAME, sets.stage(builtin.PLUGIN_NAME, [builtin.register_attack_sets]))
    kinds.commit(builtin.PLUGIN_NAME, kinds.stage(builtin.PLUGIN_NAME, [builtin.register_techniques]))
    return sets, kinds


def _sets(plugins: "Registries | None") -> Registry[AttackSet]:
    return builtin_redteam()[0] if plugins is None else plugins.registry("register_attack_sets")


def _kinds(plugins: "Registries | None") -> Registry[type[Technique]]:
    return builtin_redteam()[1] if plugins is None else plugins.registry("register_techniques")


def attack_sets(plugins: "Registries | None" = None) -> dict[str, AttackSet]:
    """Registered attack sets by name (None: Sonar's own)."""
    return _sets(plugins).entries


def techniques(plugins: "Registries | None" = None) -> dict[str, type[Technique]]:
    """Registered techniques by name (None: Sonar's own)."""
    return _kinds(plugins).entries


def get_attack_set(name: str, plugins: "Registries | None" = None) -> AttackSet:
    """The set registered as ``name``; ConfigError naming the registered ones."""
    found = _sets(plugins).get(name)
    if found is None:
        known = ", ".join(attack_sets(plugins)) or "none"
        raise ConfigError(f"unknown attack set '{name}' (registered: {known}; or give the path of a .jsonl/.csv file)")
    return found


def get_technique(name: str, plugins: "Registries | None" = None) -> type[Technique]:
    """The technique registered as ``name``; ConfigError naming the registered ones."""
    found = _kinds(plugins).get(name)
    if found is None:
        known = ", ".join([DIRECT, *techniques(plugins)])
        raise ConfigError(f"unknown technique '{name}' (known: {known})")
    return found
