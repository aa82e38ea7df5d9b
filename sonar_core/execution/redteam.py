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
    from .state import RunState

__all__ = ["SUITE_DIR", "prepare_redteam", "redteam_sets", "HARMFUL_JUDGE", "conclude_redteam", "detector_figures_of"]

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
    if spec.standards:  # a standards file that cannot be read is a one-line error before anything is asked
        from ..benchmarks.standards import read_standards

        read_standards(config.resolve_path(spec.standards))
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


def detector_figures_of(detectors: list[str], state: "RunState") -> dict[str, object]:
    """Detector id -> its measured figures: a rule-based detector's precision and recall on its labelled
    answers (:class:`~sonar_core.findings.redteam.DetectorQuality`), a judge's calibration in words (its
    status and kappa), or why there is none."""
    from ..findings.redteam import detector_quality
    from ..redteam.labelled import label_detector, labelled_set_path, load_labelled_set

    figures: dict[str, object] = {}
    for detector in detectors:
        cls = state.plugins.evaluators.get(detector)
        calibration = state.judge_calibration.get(detector)
        if calibration is not None:
            kappa = (calibration.get("calibration") or {}).get("kappa")
            figures[detector] = f"judge {calibration.get('status', 'uncalibrated')}" + (
                f", kappa {kappa:.2f} on its calibration set" if isinstance(kappa, (int, float)) else "")
        elif cls is not None and (path := labelled_set_path(cls)) is not None:
            figures[detector] = detector_quality(*label_detector(cls, load_labelled_set(path)))
        else:
            figures[detector] = "not measured (no labelled answers)"
    return figures


def conclude_redteam(state: "RunState", journal) -> None:
    """A red-team run's findings from its finished folders: its problems and insights join the run's own (so
    ``--fail-on-problems`` gates them), run.json gets them, ``redteam/`` their report (docs/redteam.md)."""
    from ..artifacts.redteam import read_outcomes, read_transcripts
    from ..artifacts.redteam_report import write_redteam_dir
    from ..benchmarks.standards import read_standards
    from ..findings.redteam import redteam_findings
    from ..findings.redteam_items import core_items
    from .record import write_run_json

    spec = state.config.redteam
    if spec is None or state.pipeline is None:
        return
    reference = read_standards(state.config.resolve_path(spec.standards)).reference if spec.standards else None
    write_run_json(state, status="running")  # every finished evaluator recorded, those a resumed run kept too
    outcomes = read_outcomes(state.run_dir)
    findings = redteam_findings(outcomes, threshold=spec.threshold, over_refusal_threshold=spec.over_refusal_threshold,
                                confidence=state.config.confidence_level, reference=reference)
    figures = detector_figures_of(sorted({o.detector for o in outcomes if o.detector}), state)
    shown = [(o.test_case, o.model, o.epoch) for o in findings.successes + findings.over_refused]
    record = write_redteam_dir(state.run_dir, findings, figures, read_transcripts(state.run_dir, shown),
                               standards=spec.standards)
    problems, insights = core_items(findings)
    state.core_problems += problems
    state.core_insights += insights
    state.redteam_record = record
    journal.event("red team concluded", "Runner", "conclude_redteam", problems=len(problems), insights=len(insights),
                  attack_success_rate={m: r.value for m, r in findings.success.items()},
                  over_refusal={m: r.value for m, r in findings.over_refusal.items()})
