"""What the pages are drawn from, declared once as ``TypedDict`` s: index.html's run and evaluator views
and the drill-down's test cases, rows and verdicts.

These are the writers' own layout of the findings (plain values, laid out by :mod:`.html`,
:mod:`.drilldown` and :mod:`.verdicts`; the templates and :mod:`.case_pages` read them). An
evaluator's view is saved in its ``evaluator_summary.json`` too, so that a resumed run draws the
same page. ``NotRequired`` keys are present only where the comment beside them says.
"""

from typing import NotRequired, TypedDict

from ..jsontypes import JsonObject, JsonValue
from ..dataset import DatasetSummary
from ..llm.ledger import CostsRecord
from .record_shapes import (BoardJson, DrilldownRowsJson, InsightJson, PairJson,
                            PipelineJson, ProblemJson)

__all__ = ["EvaluatorSummaryJson", "BenchmarkRowView", "BenchmarkView", "GradeCellView", "HazardRef", "OverallGradeView", "TradeoffView",
           "BestCardView", "CaseView", "ComparisonPairView", "ConcurrencyView", "EvaluatorInfo", "EvaluatorView",
           "ExpectedCallView", "FlipView", "LeadLineView", "LeadView", "MetricCell", "MetricView", "OriginalRef",
           "PageRow", "RunView", "TableView", "TradeoffRowView", "TurnView", "VariantRef", "VerdictView",
           "WeakRowView"]


class MetricView(TypedDict):
    """One metric of an evaluator as the page shows it; ``threshold`` and ``value_range`` ends None for
    infinite ones; ``fails_by_model``: whether each model's mean fails it (the findings')."""

    key: str
    display_name: str
    description: str
    is_primary: bool
    higher_is_better: bool
    threshold: float | None
    value_range: list[float | None]
    role: str | None
    fails_by_model: dict[str, bool]


class WeakRowView(TypedDict):
    """A row of "Weakest answers"."""

    test_case_key: str
    model_key: str
    score: float
    input: str
    actual_output: str
    why: str


class TableView(TypedDict):
    """An evaluator's own table (its ``tables``), cells clipped."""

    title: str
    columns: list[str]
    rows: list[list[str]]


class EvaluatorView(TypedDict):
    """Everything index.html and the evaluator's fragment show about one evaluator (:func:`.html.evaluator_view`)."""

    id: str
    display_name: str
    label: str
    tagline: str
    anchor: str
    dir_name: str
    fragment_href: str
    #: The leaderboard as its JSON holds it (:func:`.board_files.board_json`).
    board: BoardJson
    untrusted: NotRequired[bool]  # a judge evaluator
    not_scored: NotRequired[str]  # an untrusted judge whose rows were not scored
    not_counted_note: NotRequired[str]
    leader: str | None
    versus_best: NotRequired[dict[str, PairJson]]  # with paired tests
    ties: NotRequired[list[str]]
    metrics: list[MetricView]
    primary: MetricView
    primary_by_model: dict[str, float | None]
    primary_pass_counts: dict[str, list[int]]
    sensitive_outputs: bool
    problems: list[ProblemJson]
    insights: list[InsightJson]
    tables: list[TableView]
    worst: NotRequired[list[WeakRowView]]  # not kept in evaluator_summary.json
    worst_limit: int
    row_count: int
    not_scored_count: NotRequired[int]
    notes: list[str]
    skipped_count: int
    differences: NotRequired[list[JsonObject]]
    fallbacks: NotRequired[list[str]]


class BestCardView(TypedDict):
    """The headline card: the best model (or the model under test) and what it rests on."""

    title: str
    model: str | None
    note: str


class ConcurrencyView(TypedDict):
    """A judge or host whose adaptive in-flight limit moved: the range it used and its ceiling."""

    key: str
    role: str
    min: int
    max: int
    ceiling: int | None


class RunView(TypedDict):
    """What index.html and the drill-down's pages say about the run as a whole."""

    run_id: str
    created: str
    status: str
    dataset: DatasetSummary
    models: list[str]
    best_model: str | None
    ranked_evaluators: int
    best_card: BestCardView
    failed: list[dict[str, str]]
    skipped: list[dict[str, str]]
    problem_counts: dict[str, int]
    sonar_version: str
    pipeline: PipelineJson | None
    core_problems: list[ProblemJson]
    host_calls: dict[str, dict[str, int]]
    concurrency: list[ConcurrencyView]
    costs: CostsRecord | None
    costs_line: str | None
    redteam_report: JsonValue


class TradeoffRowView(TypedDict):
    model: str
    passed: int
    checked: int
    quality: float
    seconds: float | None
    cost: float | None
    front_cost: bool
    front_time: bool
    front_all: bool


class LeadLineView(TypedDict):
    """One line of the problems index.html leads with."""

    severity: str
    evaluator: str
    anchor: str
    counts: str
    description: str


class LeadView(TypedDict):
    total: int
    sources: int
    shown: list[LeadLineView]


class MetricCell(TypedDict):
    """One metric's value of a row and its CSS status (``pass``, ``fail``, ``na``, ``not-counted``)."""

    value: float | None
    status: str


class VerdictView(TypedDict):
    """One evaluator's verdict on one drill-down row (:func:`.verdicts.verdict`)."""

    ev: int
    status: str
    text: str
    value: float | None
    why: str
    metrics: list[MetricCell]
    flags_answer: bool
    flags_context: bool


class TurnView(TypedDict):
    """A conversation turn as a page shows it (contents clipped)."""

    role: str
    content: str
    tool_calls: NotRequired[list[dict[str, str]]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class ExpectedCallView(TypedDict):
    """An expected tool call, its arguments as indented JSON, and whether the assistant made it."""

    name: str
    arguments: str
    made: bool


class PageRow(TypedDict):
    """One model's row of a drill-down test case."""

    key: str
    model: str
    model_index: int
    withheld: bool
    answer: str
    answer_cell: str
    answer_preview: str
    answer_long: bool
    context_withheld: bool
    context: list[str]
    context_count: int
    duration: float | None
    cost: float | None
    verdicts: list[VerdictView | None]
    failing: bool
    conversation: NotRequired[list[TurnView]]  # a conversation's row
    turn_verdicts: NotRequired[dict[int, list[tuple[str, str, str]]]]
    expected_tool_calls: NotRequired[list[ExpectedCallView]]


class OriginalRef(TypedDict):
    """The test case a perturbed one was made from; ``file`` None when it is not shown."""

    key: str
    file: str | None
    question: NotRequired[str]


class VariantRef(TypedDict):
    key: str
    file: str
    perturbation: str


class FlipView(TypedDict):
    ev: int
    direction: str


class ComparisonPairView(TypedDict):
    """A model's row of the original test case beside its row of the perturbed one, and each flip."""

    model: str
    original: PageRow
    perturbed: PageRow
    flips: list[FlipView]


class CaseView(TypedDict):
    """One test case of the drill-down: its texts, its rows per model and what links it to others."""

    key: str
    file: str
    question: str
    question_preview: str
    expected: str
    condition: str
    constraints: list[str]
    categories: list[str]
    category_ids: str
    perturbation: str
    original: OriginalRef | None
    variants: list[VariantRef]
    rows: list[PageRow]
    evaluator_ids: list[int]
    evaluators_with_messages: list[int]
    shared_context: bool
    failing: bool
    comparison: NotRequired[list[ComparisonPairView]]  # set once every case is built


class EvaluatorInfo(TypedDict):
    """An evaluator as the drill-down's pages name it."""

    index: int
    label: str
    display_name: str
    anchor: str
    fragment_href: str
    kind: str
    sensitive: bool
    metrics: list[MetricView]
    primary: int


class TradeoffView(TypedDict):
    """The quality / cost / speed chart and its table (:func:`.html.tradeoff_view`)."""

    svg: str
    rows: list[TradeoffRowView]


class OverallGradeView(TypedDict):
    """A model's grade over the whole benchmark: grade, text, verdict, score with its interval, safe items."""

    grade: int | None
    text: str | None
    verdict: str
    score: float | None
    interval: tuple[float, float] | None
    safe: int
    samples: int
    reference: float | None


class GradeCellView(OverallGradeView):
    """A model's grade on one hazard, with the failing rows it lists (``failing_total`` in all)."""

    anchor: str
    hazard: str
    model: str
    failing: list[JsonObject]
    failing_total: int


class HazardRef(TypedDict):
    uid: str
    title: str
    key: str


class BenchmarkRowView(TypedDict):
    model: str
    cells: list[GradeCellView]
    overall: OverallGradeView


class BenchmarkView(TypedDict):
    """index.html's grade table (:func:`.benchmark_dir.benchmark_view`)."""

    uid: str
    title: str
    version: str
    calibrating: bool
    standards: str | None
    reference: float | None
    hazards: list[HazardRef]
    rows: list[BenchmarkRowView]
    folder: str
    failing_csv: str
    failing_shown: int


class EvaluatorSummaryJson(TypedDict):
    """An evaluator's ``evaluator_summary.json``: its view (without "Weakest answers"), its problems and
    insights as their files hold them, and its drill-down rows; a resumed run reads it back."""

    schema_version: str
    view: EvaluatorView
    problems: list[ProblemJson]
    insights: list[InsightJson]
    test_cases: DrilldownRowsJson
