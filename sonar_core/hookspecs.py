"""Every hook a Sonar plugin can implement.

A plugin is a module (or object) with functions marked ``@sonar_core.hookimpl`` whose names
match the specifications below. Hooks are always called with keyword arguments, and a
specification only ever grows by new arguments, so plugins written today keep working.

Every ``register_*`` hook fills one registry (:mod:`sonar_core.registry`) the same way: a plugin whose
hook raises, registers a bad entry or takes a name already held is recorded as a plugin failure
(``sonar plugins`` shows it, the run journals it) and adds nothing to any registry.
"""

from __future__ import annotations

from typing import Callable

import pluggy

__all__ = ["hookspec", "hookimpl", "PROJECT_NAME", "register_evaluators", "register_host_kinds",
           "register_perturbators", "register_benchmarks", "register_attack_sets", "register_techniques"]

PROJECT_NAME = "sonar"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_evaluators(register: Callable[[type], None]) -> None:
    """Register evaluator classes with the core.

    Call ``register(EvaluatorClass)`` once for each :class:`sonar_core.Evaluator` subclass
    the plugin provides. The core owns the registry: registering an id that another plugin
    already registered fails the plugin, with an error that names both plugins. Return value: none.
    """


@hookspec
def register_host_kinds(register: Callable[[str, Callable], None]) -> None:
    """Register kinds of model hosts (systems under test) with the core.

    Call ``register(kind, factory)`` once per kind; ``factory(spec, services)`` gets the host's
    entry of the run configuration (a dict with at least ``key`` and ``kind``) and the run's
    :class:`sonar_core.hosts.factory.HostFactoryServices`, and returns a :class:`sonar_core.hosts.Host`.
    Registering a kind another plugin (or Sonar itself) already registered fails the plugin, with an
    error naming both plugins. Return value: none.
    """


@hookspec
def register_perturbators(register: Callable[[str, type], None]) -> None:
    """Register perturbator classes (text transformations for perturbed test cases) with the core.

    Call ``register(name, PerturbatorClass)`` once for each :class:`sonar_core.perturbations.Perturbator`
    subclass the plugin provides; ``name`` is what a run configuration's ``perturb:`` entries and the
    General Semantic Robustness evaluator's ``perturbation_type`` name. Registering a name that another
    plugin (or Sonar itself) already registered fails the plugin, with an error that names both plugins.
    Return value: none.
    """


@hookspec
def register_benchmarks(register: Callable[[object], None]) -> None:
    """Register benchmarks (hazards scored by tests, graded against standards; docs/benchmarks.md).

    Call ``register(definition)`` once per benchmark, with a
    :class:`sonar_core.benchmarks.BenchmarkDefinition`, a mapping of the same shape, or the path of a
    YAML definition. A bad definition, or a uid another plugin (or Sonar itself) already registered,
    fails the plugin with an error naming both plugins. Return value: none.
    """


@hookspec
def register_attack_sets(register: Callable[[object], None]) -> None:
    """Register red-team attack sets (attacks as data; docs/redteam.md).

    Call ``register(attack_set)`` once per set, with a :class:`sonar_core.redteam.AttackSet` or the path
    of an attack file (.jsonl or .csv). A bad file, or a set name another plugin (or Sonar itself) already
    registered, fails the plugin with an error naming both plugins. Return value: none.
    """


@hookspec
def register_techniques(register: Callable[[str, type], None]) -> None:
    """Register red-team techniques (transforms of a base attack; docs/redteam.md).

    Call ``register(name, TechniqueClass)`` once per :class:`sonar_core.redteam.Technique` subclass: a
    wrapper or an encoding implements ``apply(text, rng)``, a multi-turn technique ``scenario(goal, prompt)``.
    ``name`` is what ``--techniques`` and a ``redteam:`` section's ``techniques`` name. A name another
    plugin (or Sonar itself) already registered fails the plugin, with an error naming both. Return value: none.
    """
