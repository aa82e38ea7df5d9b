"""The findings as types: what a run concluded, in plain values the writers only lay out.

Frozen dataclasses, plain text and numbers only (no HTML, no file names, no JSON shapes): the
artifact writers (:mod:`sonar_core.artifacts`) turn them into H2O's JSON, markdown and HTML, and
conclude nothing themselves. Everything here is computed in :mod:`sonar_core.findings`:

- :class:`Problem` and :class:`Insight` (each with its :class:`Source`): what a reader is warned of
  and told, as plain text;
- :class:`Leaderboard` / :class:`LeaderboardRow`: one evaluator's models on its primary metric,
  each with its value, interval, n, rank, passing rows, and the leader (:mod:`.conclusions`);
- :class:`Board` (its :class:`BoardRow` per model, each mean's :class:`MeanInterval`, the
  :class:`PairwiseTest` between models and the :class:`EpochSummary`): everything the leaderboard
  files hold, every metric of every model (:mod:`.leaderboards`, :mod:`.confidence`);
- :class:`WeakRow`: a row on the wrong side of the primary threshold, for "Weakest answers";
- :class:`EvaluatorSummary`: what the run keeps of a finished evaluator (its leaderboard, its
  fallbacks, its problems and insights as written, and the writers' view of it);
- :class:`TradeoffRow` and :class:`RunFindings`: what the run concludes over every evaluator
  (the best model, the quality / cost / speed trade-off and its Pareto fronts, :mod:`.tradeoff`).

This module imports nothing that computes, so that the writers may import it
(tests/core/test_findings_types.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    from ..contract import RowResult
    from ..dataset import Row
    from .judge_status import JudgeTrust

__all__ = ["SEVERITIES", "SEVERITY_ORDER", "WEAK_ROWS_LIMIT", "CASE_LIMIT", "BestModel", "Board", "BoardRow", "CaseFails", "CaseRow", "CaseRows", "EpochSummary",
           "EvaluatorSummary", "Insight", "FrozenJson", "LeadLine", "LeadProblems", "Leaderboard", "LeaderboardRow", "MeanInterval", "MetricRule",
           "PairwiseTest", "Problem", "RunFindings", "Source", "TradeoffRow", "WeakRow"]

#: A plain JSON value held read-only (what a problem's or an insight's figures may hold; jsontypes.JsonValue is the
#: mutable form of the same): no object of the run's.
FrozenJson = Union[str, int, float, bool, None, Sequence["FrozenJson"], Mapping[str, "FrozenJson"]]

SEVERITIES = ("HIGH", "MEDIUM", "LOW")
#: Most severe first; used to sort problems and for the --fail-on-problems gate.
SEVERITY_ORDER = {severity: rank for rank, severity in enumerate(SEVERITIES)}
#: How many failing rows an evaluator's report lists ("Weakest answers").
WEAK_ROWS_LIMIT = 25
#: Most test cases the drill-down shows (matrix rows, case pages): each is a file to write.
CASE_LIMIT = 200


@dataclass(frozen=True)
class Source:
    """Who raised a problem or an insight: the evaluator's qualified class name, display name, id and label."""

    explainer_id: str
    explainer_name: str
    evaluator_id: str
    evaluator_label: str


@dataclass(frozen=True)
class Problem:
    """A problem found in a run: plain text (the writers escape it), a severity (one of
    :data:`SEVERITIES`), its type (``accuracy``, ``robustness``, ``dataset``, ...), what to do about
    it (``actions``), the figures it rests on (``attrs``: plain JSON values) and the files it names."""

    source: Source
    description: str
    severity: str
    problem_type: str
    actions: str = ""
    attrs: Mapping[str, FrozenJson] = field(default_factory=dict)
    #: Files of the run folder it points to, relative to it (``dataset/failed_items.json``).
    resources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Insight:
    """An insight about a run's models: plain text, its type (``accuracy``, ``performance``, ``cost``,
    ``flaky``, ...), what to do with it (``actions``) and its figures (``attrs``: plain JSON values)."""

    source: Source
    description: str
    insight_type: str
    actions: str = ""
    attrs: Mapping[str, FrozenJson] = field(default_factory=dict)


@dataclass(frozen=True)
class MeanInterval:
    """How sure a model's mean of one metric is: its interval (``ci_low``/``ci_high`` None when it has
    none: a model-level metric, or no value), the values it rests on (``n``) and how it was drawn
    (``method``: "wilson" or "bootstrap"; None without an interval)."""

    ci_low: float | None
    ci_high: float | None
    n: int
    method: str | None


@dataclass(frozen=True)
class PairwiseTest:
    """A paired test of two ranked models on the primary metric (``model_a`` ranked above ``model_b``).

    ``delta``: model_a's mean minus model_b's over the ``n`` test cases both answered; ``p_adjusted``:
    Holm-adjusted over the evaluator's pairs; ``significant``: it is below 1 - confidence.
    ``discordant``: McNemar's (model_a only passed, model_b only passed) counts, None for a permutation test.
    """

    model_a: str
    model_b: str
    metric: str
    test: str
    n: int
    delta: float
    p_value: float
    p_adjusted: float
    significant: bool
    discordant: tuple[int, int] | None = None


@dataclass(frozen=True)
class BoardRow:
    """One model on every metric of an evaluator, as the leaderboard files hold it.

    ``metrics``: metric key -> the model's mean (None: no value). ``rows``: its rows; ``total_time``
    (s) and ``total_cost`` (USD): of its answers, None when unknown. ``counts``: a pass/fail
    evaluator's rows per role (None for a score evaluator). ``consistency``: with epochs, the mean
    share of epochs agreeing with the majority verdict. ``intervals``: with intervals asked for, each
    metric's :class:`MeanInterval`; ``tied_with_best``: the paired test cannot tell it from the leader.
    """

    model: str
    rank: int | None
    metrics: Mapping[str, float | None]
    rows: int
    total_time: float | None
    total_cost: float | None
    counts: Mapping[str, int] | None = None
    consistency: float | None = None
    intervals: Mapping[str, MeanInterval] | None = None
    tied_with_best: bool = False


@dataclass(frozen=True)
class EpochSummary:
    """A run of several epochs: how many, the reducer, the metric whose verdict is counted per epoch
    (None without a verdict), and per model its flaky and its unscored test cases."""

    epochs: int
    reducer: str
    verdict_metric: str | None
    flaky_test_cases: Mapping[str, int]
    unscored_test_cases: Mapping[str, int]


@dataclass(frozen=True)
class Board:
    """One evaluator's full leaderboard: every model on every metric (:mod:`.leaderboards`).

    ``kind``: "bool" (pass/fail evaluators) or "heatmap". ``ranking``: best first on the primary
    metric, empty on an untrusted judge's board, whose models are then ``unranked_models`` (by name;
    None otherwise). ``epochs``: with several epochs (each row then has its ``consistency``).
    ``judge_trust``: a judge evaluator's calibration. ``confidence_level``: with intervals (each row
    then has its ``intervals`` and ``tied_with_best``, and ``pairwise`` the paired tests), else None.
    """

    kind: str
    primary_metric: str
    ranking: tuple[str, ...]
    rows: tuple[BoardRow, ...]
    epochs: EpochSummary | None = None
    judge_trust: "JudgeTrust | None" = None
    unranked_models: tuple[str, ...] | None = None
    confidence_level: float | None = None
    pairwise: tuple[PairwiseTest, ...] = ()

    @property
    def untrusted(self) -> bool:
        """Whether its judge failed its calibration."""
        return self.judge_trust is not None and self.judge_trust.status == "untrusted"


@dataclass(frozen=True)
class LeaderboardRow:
    """One model on an evaluator's primary metric.

    ``rank``: 1 for the best, None on an untrusted judge's board (it ranks no model). ``value``:
    the model's mean of the primary metric (None: no row scored). ``ci_low``/``ci_high``: its
    interval, None without one; ``n``: the test cases the value rests on (None without intervals).
    ``passed``/``checked``: rows on the right side of the primary threshold, of the rows scored
    (0/0 on an untrusted judge's board: its verdicts count nowhere). ``fails``: whether the mean
    itself is on the wrong side of the threshold.
    """

    model: str
    rank: int | None
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    passed: int = 0
    checked: int = 0
    fails: bool = False


@dataclass(frozen=True)
class Leaderboard:
    """One evaluator's models ranked by its primary metric (best first; ties by model name).

    ``ranking`` is empty on an untrusted judge's board; ``leader`` is the first model only when it
    is strictly ahead of the second (with a tie at the top the order is only the names' order).
    ``fails_by_metric``: metric key -> model -> whether its mean fails that metric's threshold.
    """

    primary_metric: str
    ranking: tuple[str, ...]
    rows: tuple[LeaderboardRow, ...]
    leader: str | None = None
    untrusted: bool = False
    fails_by_metric: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)

    def row(self, model: str) -> LeaderboardRow | None:
        return next((r for r in self.rows if r.model == model), None)

    @property
    def pass_counts(self) -> dict[str, tuple[int, int]]:
        """model -> (passed, checked) of the primary metric, for the models with a row checked, by name."""
        return {r.model: (r.passed, r.checked) for r in sorted(self.rows, key=lambda r: r.model) if r.checked}


@dataclass(frozen=True)
class WeakRow:
    """A row on the wrong side of the primary threshold: its primary value, the row and its result."""

    score: float
    row: "Row"
    result: "RowResult"


@dataclass(frozen=True)
class CaseRow:
    """One drill-down row of an evaluator: its key, its finite values (the evaluator's metric order;
    None: no value) and what to say about it (empty: nothing)."""

    key: str
    values: tuple[float | None, ...]
    why: str


@dataclass(frozen=True)
class CaseRows:
    """An evaluator's rows of the drill-down's test cases (:mod:`.case_rows`): ``test_cases``: how many
    it scored or skipped in all; ``skipped``: (row key, missing input); ``turns``: row key ->
    ((turn, primary value), ...) for the rows scored turn by turn."""

    test_cases: int
    rows: tuple[CaseRow, ...]
    skipped: tuple[tuple[str, str], ...]
    turns: Mapping[str, tuple[tuple[int, float | None], ...]]


@dataclass(frozen=True)
class CaseFails:
    """Which of an evaluator's drill-down values fail their thresholds (:mod:`.case_verdicts`).

    ``values``: row key -> per metric (the evaluator's metric order), whether its value fails (None: no
    value). ``turns``: row key -> per turn it scored turn by turn (the order the summary keeps them),
    whether the primary metric's value fails (None: no value).
    """

    values: Mapping[str, tuple[bool | None, ...]]
    turns: Mapping[str, tuple[bool | None, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricRule:
    """One metric's side of its threshold as the run stored it: ``threshold`` None (JSON null, an
    infinite threshold) means no value is ever on the wrong side."""

    key: str
    higher_is_better: bool
    threshold: float | None


@dataclass(frozen=True)
class EvaluatorSummary:
    """What the run keeps of one finished evaluator, read by run.json, index.html and the drill-down.

    ``leaderboard``: its typed leaderboard (the best model overall is chosen from these). ``problems``
    and ``insights``: as written to its folder (H2O's JSON items; a problem lists at most 1,000 rows).
    ``view``: the writers' own layout of it (index.html's section), kept so that a resumed run draws
    the same page; nothing outside :mod:`sonar_core.artifacts` reads it. ``test_cases``: the
    drill-down's cells (None in a summary written before the drill-down existed). ``metrics``: each
    metric's threshold rule, in the evaluator's metric order (the order of the cells' values).
    """

    label: str
    leaderboard: Leaderboard
    fallbacks: tuple[str, ...]
    problems: Sequence[Mapping[str, Any]]
    insights: Sequence[Mapping[str, Any]]
    view: Mapping[str, Any]
    test_cases: Mapping[str, Any] | None = None
    metrics: tuple[MetricRule, ...] = ()

    @property
    def untrusted(self) -> bool:
        return self.leaderboard.untrusted


@dataclass(frozen=True)
class TradeoffRow:
    """One model's quality against its cost and speed, over every evaluator.

    ``quality`` = ``passed`` / ``checked`` (rows on the right side of each evaluator's primary
    threshold, over all rows scored); ``seconds`` and ``cost``: mean seconds and USD per answer (None
    when unknown). ``front_cost``/``front_time``/``front_all``: on the Pareto front of quality against
    cost, against time, and against both.
    """

    model: str
    passed: int
    checked: int
    quality: float
    seconds: float | None
    cost: float | None
    front_cost: bool = False
    front_time: bool = False
    front_all: bool = False


@dataclass(frozen=True)
class BestModel:
    """The best model overall and the headline card about it.

    ``model``: the model with the lowest mean rank over the rankings of more than one model (None
    when no evaluator ranks the models); ``counted``: how many rankings counted. ``title``, ``named``
    and ``note``: what the headline shows: the best model, or in a one-model run the model under
    test (``named`` is then that model while ``model`` stays None), and what it rests on or why none.
    """

    model: str | None
    counted: int
    title: str
    named: str | None
    note: str


@dataclass(frozen=True)
class LeadLine:
    """One line of the problems a report leads with: a source's most severe problem (``worst``: its
    position among the source's problems) and its ``severity``, and how many it has of each (``counts``,
    e.g. "2 high · 1 medium"). ``source``: the evaluator's position in run order, None for the core's
    own problems (about the models under test)."""

    severity: str
    source: int | None
    worst: int
    counts: str


@dataclass(frozen=True)
class LeadProblems:
    """The problems a report leads with (:mod:`.lead`): ``shown`` most severe first, of the ``total``
    problems of the ``sources`` that have some."""

    total: int
    sources: int
    shown: tuple[LeadLine, ...]


@dataclass(frozen=True)
class RunFindings:
    """What the run concludes over all its evaluators (:func:`.run_findings.run_findings`).

    ``severity_counts``: severity -> problems of it, every severity present (the core's own problems
    included). ``tradeoff``: one row per model with rows checked, by name (empty when the model speeds
    and costs were not asked for: run.json, written as the run goes, needs none).
    """

    best: BestModel
    severity_counts: Mapping[str, int]
    tradeoff: tuple[TradeoffRow, ...] = ()
