"""A run's ``redteam:`` section made into its test suite and detectors, before anything runs.

The attack sets (registered names, or files relative to the configuration, loaded through their column
mapping) are expanded with the technique chains (:func:`sonar_core.redteam.expand_attacks`) and written
as a JSON Lines test suite into ``<output_dir>/redteam-suites/``, named by its content: the same
configuration gives the same file, so a resumed run finds its suite unchanged. The configuration then
runs as any run with a test suite and hosts: ``test_suite`` is that file, and each detector the attacks
name becomes an evaluator routed to its rows by category (``detector:<id>``), unless the configuration
lists an evaluator of that label itself. The default ``offline`` group stands for the detectors alone.
Epochs are reduced with ``pass_hat_k`` unless the configuration chose otherwise: an attack's
``attack_success_rate`` on the leaderboard is then hit@k (one success in k samples counts).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ALL_OFFLINE, EvaluatorSpec, RedteamSpec, RedteamSuiteSpec, RunConfig
from ..errors import ConfigError
from ..redteam import AttackSet, detector_category, expand_attacks, get_attack_set, load_attack_file, parse_chains
from ..redteam import write_suite

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins import PluginManager

__all__ = ["SUITE_DIR", "prepare_redteam", "redteam_sets", "HARMFUL_JUDGE"]

#: The folder of the output directory that receives expanded red-team suites.
SUITE_DIR = "redteam-suites"
#: The detector that decides harmful requests when ``redteam.judge`` names a judge.
HARMFUL_JUDGE = "harmful_compliance"


def redteam_sets(spec: RedteamSpec, config: RunConfig, plugins: "PluginManager") -> list[AttackSet]:
    """The attack sets ``spec.suites`` names: registered sets by name, files by path (with their mapping)."""
    sets = []
    for entry in spec.suites:
        if isinstance(entry, RedteamSuiteSpec):
            sets.append(load_attack_file(config.resolve_path(entry.path), entry.columns, entry.defaults))
        elif plugins.registry("register_attack_sets").get(entry) is not None:
            sets.append(get_attack_set(entry, plugins))
        elif entry.lower().endswith((".jsonl", ".ndjson", ".csv")):
            sets.append(load_attack_file(config.resolve_path(entry)))
        else:
            get_attack_set(entry, plugins)  # ConfigError naming the registered sets
    return sets


def prepare_redteam(config: RunConfig, plugins: "PluginManager") -> RunConfig:
    """``config`` with its red-team suite written and its detectors added (unchanged without ``redteam:``)."""
    spec = config.redteam
    if spec is None:
        return config
    chains = parse_chains(spec.techniques, plugins)
    reroute = {"refusal": HARMFUL_JUDGE} if spec.judge else {}
    expansion = expand_attacks(redteam_sets(spec, config, plugins), chains, seed=spec.seed, attacker=spec.attacker,
                               max_turns=spec.max_turns, categories=spec.categories, hazards=spec.hazards,
                               system_delivery=spec.system_delivery, reroute=reroute, plugins=plugins)
    folder = (config.resolve_path(config.output_dir) / SUITE_DIR).resolve()
    # A resumed run's test_suite is its expansion, in that folder; anything else is the user's own suite.
    if config.test_suite is not None and config.resolve_path(config.test_suite).resolve().parent != folder:
        raise ConfigError("'test_suite' and 'redteam' exclude each other (the red-team suite is the test suite)")
    path = write_suite(expansion.rows, folder)
    specs = [s for s in config.specs() if s.id != ALL_OFFLINE]
    listed = {s.label for s in specs}
    detectors = list(dict.fromkeys(row["attack"]["detector"] for row in expansion.rows))
    for detector in detectors:
        if detector not in listed:
            params = {"custom_eval_judge_config_key": spec.judge} if detector == HARMFUL_JUDGE else {}
            specs.append(EvaluatorSpec(id=detector, params=params, categories=[detector_category(detector)]))
    changes = {"test_suite": str(path), "evaluators": specs}
    if config.epochs > 1 and config.epoch_reducer == "mean":
        changes["epoch_reducer"] = "pass_hat_k"
    return config.model_copy(update=changes)
