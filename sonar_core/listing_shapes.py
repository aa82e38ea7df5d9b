"""The JSON shapes of the ``--json`` listings (:mod:`.listings`): what ``sonar evaluators``, ``describe``,
``plugins``, ``hosts``, ``models``, ``perturbators`` and ``judges`` print with ``--json``.

``TypedDict`` s: a listing is the plain JSON object it always was; these say which keys it has and what
each holds, for the code that builds it and for a reader of docs/cli.md. A value a plugin declares
(a parameter's default, a host setting's default) is whatever the plugin wrote: ``JsonValue``.
"""

from __future__ import annotations

from typing import TypedDict

from .jsontypes import JsonValue

__all__ = ["FailureEntry", "EvaluatorFields", "EvaluatorEntry", "EvaluatorsListing", "MetricEntry",
           "ParameterEntry", "EvaluatorDescription", "PluginEntry", "PluginsListing", "SettingEntry",
           "HostKindEntry", "HostsListing", "ModelEntry", "ModelsListing", "PerturbatorEntry",
           "PerturbatorsListing", "JudgesListing", "AttackSetEntry", "TechniqueEntry", "RedteamListing",
           "DetectorFigure", "BenchmarkEntry", "BenchmarkTest", "BenchmarkHazard", "BenchmarkDescription"]


class FailureEntry(TypedDict):
    plugin: str
    stage: str
    error: str


class EvaluatorFields(TypedDict):
    """The fields an evaluator has in both the list and its description."""
    id: str
    qualified_name: str
    display_name: str
    tagline: str
    plugin: str | None
    kind: str
    category: str
    problem_type: str
    compatibility: list[str]
    required_inputs: list[str]
    optional_inputs: list[str]
    requires_judge: bool
    supports_gpu: bool
    offline: bool
    primary_metric: str
    extra: str | None  #: the extra it needs beyond the base install
    needs: str | None  #: that requirement again, when it is not installed


class EvaluatorEntry(EvaluatorFields):
    metric_keys: list[str]


class EvaluatorsListing(TypedDict):
    """``sonar evaluators --json``."""
    schema_version: str
    evaluators: list[EvaluatorEntry]
    plugin_failures: list[FailureEntry]


class MetricEntry(TypedDict):
    key: str
    display_name: str
    description: str
    value_range: list[float | None]  #: an unbounded end is null
    higher_is_better: bool
    threshold: float | None
    is_primary: bool
    role: str | None
    raises_problems: bool
    model_level: bool


class ParameterEntry(TypedDict):
    name: str
    type: str
    default: JsonValue
    description: str
    min: float | None
    max: float | None
    choices: list[JsonValue]


class EvaluatorDescription(EvaluatorFields):
    """``sonar describe ID --json``."""
    schema_version: str
    description: str
    needs_all_rows: bool
    sensitive_outputs: bool
    metrics: list[MetricEntry]
    parameters: list[ParameterEntry]
    differences: list[dict[str, str]]  #: ``field``, ``what``, ``why``, ``action``


class PluginEntry(TypedDict):
    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: list[str]
    evaluators: list[str]


class PluginsListing(TypedDict):
    """``sonar plugins --json``."""
    schema_version: str
    plugins: list[PluginEntry]
    failures: list[FailureEntry]


class SettingEntry(TypedDict):
    name: str
    type: str
    required: bool
    default: JsonValue


class HostKindEntry(TypedDict):
    kind: str
    plugin: str
    description: str
    settings: list[SettingEntry] | None  #: None for a kind that declares no settings model


class HostsListing(TypedDict):
    """``sonar hosts --json``."""
    schema_version: str
    common_settings: list[SettingEntry]
    host_kinds: list[HostKindEntry]
    plugin_failures: list[FailureEntry]


class ModelEntry(TypedDict):
    name: str
    kind: str | None
    present: bool
    source: str
    location: str
    used_by: list[str]  #: ``evaluator.parameter`` that default to it
    provide: str | None  #: how to provide it, when it is not present


class ModelsListing(TypedDict):
    """``sonar models --json``."""
    schema_version: str
    store: str
    models: list[ModelEntry]
    plugin_failures: list[FailureEntry]


class PerturbatorEntry(TypedDict, total=False):
    name: str
    description: str
    seeded: bool
    parameters: list[ParameterEntry]
    output: str  #: only with ``--text``: what the perturbator makes of it


class PerturbatorsListing(TypedDict):
    """``sonar perturbators --json``."""
    schema_version: str
    perturbators: list[PerturbatorEntry]
    plugin_failures: list[FailureEntry]


class JudgesListing(TypedDict):
    """``sonar judges --json``: the LLM configurations (one object per row, keyed by ``JUDGE_FIELDS``)."""
    schema_version: str
    configs_file: str | None
    default_judge: str
    configs: list[dict[str, str]]


class AttackSetEntry(TypedDict):
    name: str
    version: str
    attacks: int
    categories: dict[str, int]  #: attacks per category, in the set's order
    plugin: str | None
    path: str


class TechniqueEntry(TypedDict):
    name: str
    kind: str  #: wrapper, encoding, multi_turn (``none`` for direct)
    plugin: str | None
    description: str


class RedteamListing(TypedDict):
    """``sonar redteam --list --json``."""
    schema_version: str
    attack_sets: list[AttackSetEntry]
    techniques: list[TechniqueEntry]


class DetectorFigure(TypedDict):
    """``sonar redteam --detector-figures --json``: one detector measured on its labelled answers."""
    detector: str
    positive: str
    items: int
    set_path: str
    set_sha256: str
    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    not_assessed: int
    precision: JsonValue  #: a rate with its interval (docs/redteam.md)
    recall: JsonValue
    text: str


class BenchmarkEntry(TypedDict):
    """One benchmark of ``sonar benchmarks --json``."""
    uid: str
    version: str
    name: str
    hazards: list[str]
    tests: list[str]
    plugin: str | None
    standards: str | None  #: its default standards file


class BenchmarkTest(TypedDict):
    uid: str
    evaluator: str
    params: dict[str, JsonValue]
    thresholds: dict[str, float]
    categories: list[str]
    safe: dict[str, JsonValue]  #: ``metric`` and ``threshold`` (None: the primary metric, the threshold in force)


class BenchmarkHazard(TypedDict):
    uid: str
    hazard_key: str
    name: str
    description: str
    reference: float | None  #: from its standards file, when there is one
    tests: list[BenchmarkTest]


class BenchmarkDescription(TypedDict):
    """``sonar benchmarks describe UID --json`` (after ``schema_version``)."""
    uid: str
    version: str
    name: str
    description: str
    plugin: str | None
    source: str
    standards: str | None
    hazards: list[BenchmarkHazard]
