"""One collector for every ``register_*`` hook: evaluators, host kinds, perturbators, benchmarks, attack
sets and techniques.

Each registry is a :class:`Registry`: a hook name, what its entries are called in messages, and a
check of one ``register(...)`` call. The plugin manager (:mod:`sonar_core.plugins`) collects every
registry plugin by plugin, in load order (Sonar's own built-ins first): :meth:`Registry.stage` runs
one plugin's implementations of the hook and checks each entry; only when every registry accepted
the plugin does :meth:`Registry.commit` add its entries. A plugin whose hook raises, registers a bad
entry or takes a name another plugin holds is therefore left out of every registry and recorded once,
as a :class:`sonar_core.plugins.PluginFailure`, whichever registry it broke.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Protocol, TypeVar

from .errors import PluginError

__all__ = ["Registry", "Registries", "named_entry"]

T = TypeVar("T")


def named_entry(name: Any, value: Any) -> tuple[Any, Any]:
    """The entry of a ``register(name, value)`` call (host kinds, perturbators)."""
    return name, value


@dataclass
class Registry(Generic[T]):
    """Entries that plugins register through one hook, each attributed to its plugin.

    Attributes:
        hook: the hook's name in :mod:`sonar_core.hookspecs` (``register_perturbators``).
        noun: what an entry's name is called in messages (``perturbator``, ``host kind``,
            ``evaluator id``): ``"<noun> 'x' is registered by both plugin 'a' and plugin 'b'"``.
        check: why the arguments of one ``register(...)`` call are not a usable entry, or None.
        entry: the arguments of an accepted call -> (name, value); :func:`named_entry` by default.
        aliases: other spellings of registered names; registering one is a clash with the owner
            of the name it spells.
    """

    hook: str
    noun: str
    check: Callable[..., str | None]
    entry: Callable[..., tuple[str, T]] = named_entry
    aliases: dict[str, str] = field(default_factory=dict)
    _entries: dict[str, T] = field(default_factory=dict, init=False, repr=False)
    _owners: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def stage(self, plugin: str, implementations: list[Callable[..., None]]) -> list[tuple[str, T]]:
        """Run one plugin's implementations of the hook; its checked entries, not yet added.

        Raises whatever the hook raises, or PluginError for a bad entry or a name already taken
        (by another plugin, or twice by this one).
        """
        staged: list[tuple[str, T]] = []

        def register(*args: Any) -> None:
            problem = self.check(*args)
            if problem:
                raise PluginError(problem)
            staged.append(self.entry(*args))

        for implementation in implementations:
            implementation(register=register)
        taken: dict[str, str] = {}
        for name, _ in staged:
            owner = self.owner(name) or taken.get(name)
            if owner is not None:
                raise PluginError(f"{self.noun} '{name}' is registered by both plugin '{owner}' "
                                  f"and plugin '{plugin}'")
            taken[name] = plugin
        return staged

    def commit(self, plugin: str, staged: list[tuple[str, T]]) -> None:
        """Add a plugin's staged entries (after every registry accepted the plugin)."""
        for name, value in staged:
            self._entries[name] = value
            self._owners[name] = plugin

    def owner(self, name: str) -> str | None:
        """The plugin that registered ``name`` (or the name an alias spells), or None."""
        return self._owners.get(self.aliases.get(name, name))

    def get(self, name: str) -> T | None:
        """The entry registered as ``name`` (or the name an alias spells), or None."""
        return self._entries.get(self.aliases.get(name, name))

    @property
    def entries(self) -> dict[str, T]:
        """Registered entries by name, sorted by name."""
        return dict(sorted(self._entries.items()))

    @property
    def owners(self) -> dict[str, str]:
        """name -> the plugin that registered it, in registration order."""
        return dict(self._owners)


class Registries(Protocol):
    """What the code below the plugin manager asks of it: the registry one hook fills, plugins loaded.

    :class:`sonar_core.plugins.PluginManager` is one; the service registries (host kinds,
    perturbators, benchmarks, attacks), the contract and the evaluation context name this protocol
    instead of the manager, so nothing the manager imports imports it back.
    """

    def registry(self, hook: str) -> Registry[Any]:
        """The registry the hook ``hook`` fills (``register_perturbators``)."""
        ...
