"""The JSON shapes Sonar writes, declared once as ``TypedDict`` s: H2O's problem and insight items
(problems_and_actions.json, insights_and_actions.json, run.json's ``problems``/``insights``) and
run.json's sections (:class:`~.run_json.RunRecord`'s fields).

Keys are in the order the files hold them. ``NotRequired`` keys are written only in some runs
(docs/result-directory.md says when). Where a section's inner content is a service's own counters,
a plugin's parameters or a host's settings, it is a :data:`~sonar_core.jsontypes.JsonObject`.
tests/core/test_record_shapes.py checks a real run's files against these declarations, key by key.

No postponed annotations here: ``NotRequired`` is seen only in annotations evaluated when the class
is made.
"""

from typing import NotRequired, TypedDict

from ..findings.judge_status import JudgeTrustJson
from ..jsontypes import JsonObject, JsonValue

__all__ = ["CalibrationJson", "DrilldownRowsJson", "DescriptorJson", "ExplanationJson", "ParameterJson", "BoardJson", "BoardRowJson", "IntervalJson", "LeaderboardFileJson",
           "LeaderboardIndexJson", "PairJson", "ExecutedJson", "InsightJson", "ItemJson",
           "LlmJson", "PipelineJson", "ProblemJson", "ServicesJson", "StatisticsJson", "TimingsJson", "VersionsJson"]


class ItemJson(TypedDict):
    """The keys a problem and an insight share, in the files' order."""

    schema_version: str
    description: str
    description_html: str
    actions_description: str
    actions_codes: list[str]
    explainer_id: str
    explainer_name: str
    evaluator_id: str
    evaluator_label: str
    explanation_type: str
    resources: list[str]


class ProblemJson(ItemJson):
    """One item of problems_and_actions.json (H2O Sonar's keys)."""

    severity: str
    problem_type: str
    problem_attrs: dict[str, JsonValue]


class InsightJson(ItemJson):
    """One item of insights_and_actions.json (H2O Sonar's keys)."""

    insight_type: str
    insight_attrs: dict[str, JsonValue]


class ExecutedJson(TypedDict):
    """One evaluator that ran (``result.executed_explainers``): its job key, ids, folder and outcome;
    ``duration`` in seconds (None for a finished folder a resumed run kept, marked ``resumed``)."""

    key: str
    evaluator_id: str
    name: str
    explainer_id: str
    job_location: str
    status: str
    error: str
    duration: float | None
    resumed: NotRequired[bool]


class VersionsJson(TypedDict):
    """``versions``: Sonar's, Python's and each plugin's."""

    sonar: str
    python: str
    plugins: dict[str, str]


class TimingsJson(TypedDict):
    """``timings``: wall seconds since the run started."""

    seconds: float


class StatisticsJson(TypedDict):
    """``statistics``: how intervals and paired tests are computed (method per kind of metric)."""

    confidence_level: float
    bootstrap_resamples: int
    seed: int
    interval_methods: dict[str, str]
    pairwise_tests: dict[str, str]
    correction: str


class ServicesJson(TypedDict):
    """``services``: the embedding service's device, counters per model and model loads."""

    embeddings: JsonObject


class LlmCacheJson(TypedDict):
    path: str
    mode: str


class LlmJson(TypedDict):
    """``llm``: the judges' configuration file, default judge, cache, and per configuration used its
    public settings and counters."""

    configs_file: str | None
    default_judge: str | None
    cache: LlmCacheJson
    used: dict[str, JsonObject]


class CalibrationJson(JudgeTrustJson, total=False):
    """One judge evaluator's entry of ``judge_calibration``: its judge's trust (``JudgeTrust``'s fields and
    its summary line), the calibration it rests on (None for an uncalibrated judge) and, in a dry run whose
    measurement was of placeholder answers, ``outcome_unknown``."""

    calibration: JsonObject | None
    outcome_unknown: bool


class PipelineJson(TypedDict, total=False):
    """``pipeline``: the test suite, its fingerprint, seconds, what each host was asked and answered,
    failed items, the dataset written and the hosts' settings."""

    test_suite: str
    test_suite_fingerprint: str
    seconds: float
    hosts: dict[str, JsonObject]
    failed_items: int
    dataset: str
    host_settings: dict[str, JsonObject]


class DrilldownRowsJson(TypedDict):
    """An evaluator's rows of the drill-down's test cases, in its ``evaluator_summary.json``
    (:func:`.drilldown.evaluator_rows`): ``rows`` holds ``[row key, [value per metric], message or null]``,
    ``skipped`` ``[row key, missing input]``, ``turns`` (rows scored turn by turn) row key -> ``[[turn, value], ...]``."""

    schema_version: str
    case_limit: int
    test_cases: int
    rows: list[list[str | list[float | None] | None]]
    skipped: list[list[str]]
    turns: NotRequired[dict[str, list[list[int | float | None]]]]


class IntervalJson(TypedDict):
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str | None


class DiscordantJson(TypedDict):
    a_only: int
    b_only: int


class PairJson(TypedDict):
    """A paired test of two ranked models (``model_a`` above ``model_b``) on the primary metric."""

    model_a: str
    model_b: str
    metric: str
    test: str
    n: int
    delta: float
    p_value: float
    discordant: NotRequired[DiscordantJson]  # McNemar's test only
    p_adjusted: float
    significant: bool


class BoardRowJson(TypedDict):
    """One model's row: its rank, every metric's mean, rows, time and cost; the rest where the board has it."""

    rank: int | None
    model: str
    metrics: dict[str, float | None]
    rows: int
    total_time: float | None
    total_cost: float | None
    counts: NotRequired[dict[str, int]]  # a pass/fail evaluator
    consistency: NotRequired[float | None]  # with epochs
    intervals: NotRequired[dict[str, IntervalJson]]  # with intervals
    tied_with_best: NotRequired[bool]


class BoardJson(TypedDict):
    """The leaderboard as the page's view and the markdown read it (:func:`board_json`)."""

    schema_version: str
    kind: str
    primary_metric: str
    ranking: list[str]
    rows: list[BoardRowJson]
    metrics_meta: list[JsonObject]
    epochs: NotRequired[JsonObject]
    judge_trust: NotRequired[JudgeTrustJson]
    unranked_models: NotRequired[list[str]]
    confidence_level: NotRequired[float]
    pairwise: NotRequired[list[PairJson]]


class LeaderboardFileJson(TypedDict):
    """``leaderboard_<N>.json``: all metrics (N = 0) or one, per model, with intervals where there are some."""

    schema_version: str
    kind: str
    metric: str
    ranking: list[str]
    data: dict[str, dict[str, float | None]]
    intervals: NotRequired[dict[str, dict[str, IntervalJson]]]
    confidence_level: NotRequired[float]
    models: dict[str, JsonObject]
    metadata: dict[str, JsonObject]
    pairwise: NotRequired[list[PairJson]]
    judge_trust: NotRequired[JudgeTrustJson]


class LeaderboardIndexJson(TypedDict):
    """The leaderboard's JSON index: the file of each metric."""

    schema_version: str
    kind: str
    primary_metric: str
    files: dict[str, str]
    metrics: list[str]
    epochs: NotRequired[JsonObject]
    pairwise: NotRequired[list[PairJson]]
    judge_trust: NotRequired[JudgeTrustJson]


class ParameterJson(TypedDict):
    """One parameter of an evaluator in its result descriptor (H2O Sonar's keys): its value in force."""

    name: str
    description: str
    type: str
    val: JsonValue
    default: JsonValue
    predefined: list[JsonValue]
    min_: float | None
    max_: float | None
    category: str


class ExplanationJson(TypedDict):
    """One explanation (result) an evaluator's folder holds, and its formats."""

    explanation_type: str
    name: str
    category: str
    scope: str
    formats: list[str]


class DescriptorJson(TypedDict):
    """An evaluator's result descriptor (``result_descriptor.json``; H2O Sonar's keys)."""

    schema_version: str
    id: str
    key: str
    name: str
    display_name: str
    tagline: str
    description: str
    brief_description: str
    category: str
    result_kind: str
    model_types: list[str]
    explanation_scopes: list[str]
    explanations: list[ExplanationJson]
    keywords: list[str]
    required_inputs: list[str]
    optional_inputs: list[str]
    requires_judge: bool
    supports_gpu: bool
    parameters: list[ParameterJson]
    metrics_meta: list[JsonObject]
