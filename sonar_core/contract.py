"""The evaluator contract: what a plugin declares and what it returns.

An evaluator is a class that declares, as class attributes, everything the core needs to
know about it (id, names, required inputs, parameters, metrics) and implements one method,
:meth:`Evaluator.evaluate`, that turns rows of the LLM dataset into per-row metric values.
Aggregation, problems, insights, leaderboards and every artifact are the core's job.
"""

from __future__ import annotations

import enum
import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Sequence

from . import extras
from .differences import FALLBACK_DETAIL, Difference
from .evaluator_shapes import ExtraInsight, ExtraProblem, MetricMeta, OutputMeta, SentenceScore
from .inputs import Input
from .jsontypes import JsonObject
from .params import COMMON_PARAMETERS, Param, ParameterError, ParamValues

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from .context import EvaluationContext
    from .dataset import Row
    from .registry import Registries

__all__ = [
    "Input",
    "ResultKind",
    "MetricRole",
    "Metric",
    "Param",
    "RowResult",
    "Table",
    "Evaluator",
    "Difference",
    "FALLBACK_DETAIL",
    "ParameterError",
    "COMMON_PARAMETERS",
    "finite_or_none",
    "MetricMeta",
    "SentenceScore",
    "OutputMeta",
    "ExtraProblem",
    "ExtraInsight",
    "ParamValues",
]


class ResultKind(str, enum.Enum):
    """Decides the leaderboard type: bool (pass/fail) or heatmap (scores)."""

    BOOL = "bool"
    SCORE = "score"


class MetricRole(str, enum.Enum):
    """What a per-row 0/1 metric of a pass/fail evaluator counts.

    The core reads roles to fill the bool leaderboard's pass / fail / retrieval-failure /
    generation-failure / parse-failure counts, whatever the metric keys are called.
    """

    PASS = "pass"
    FAIL = "fail"
    RETRIEVAL_FAILURE = "retrieval_failure"
    GENERATION_FAILURE = "generation_failure"
    PARSE_FAILURE = "parse_failure"


@dataclass(frozen=True)
class Metric:
    """Metadata of one metric.

    Per-row values are floats (or None when the row could not be scored); the core
    aggregates a model's rows by their mean, so a pass/fail metric stored as 0/1 per row
    becomes the share of rows, in [0, 1], for the model.
    """

    key: str
    display_name: str
    description: str
    value_range: tuple[float, float] = (0.0, 1.0)
    higher_is_better: bool = True
    threshold: float = 0.5
    is_primary: bool = False
    role: MetricRole | None = None
    #: False for metrics that only mirror another (fail = 1 - pass): no problems of their own.
    raises_problems: bool = True
    #: True when the value is a property of a model's whole set of rows (e.g. macro precision),
    #: repeated on each of its rows: problems then name no failing rows, flips are not checked.
    model_level: bool = False
    data_type: str = "float"
    display_format: str = ".4f"

    def json_range(self) -> list[float | None]:
        """``value_range`` as JSON holds it: an unbounded end (a count's ``math.inf``) is null."""
        return [finite_or_none(end) for end in self.value_range]

    def meta(self, threshold: float | None = None, is_primary: bool | None = None) -> MetricMeta:
        """The ``metrics_meta`` entry (H2O Sonar's shape) with the threshold in force.

        JSON has no infinity: an unbounded end of the range, or an infinite threshold (no value is
        ever on its wrong side), is written as null.
        """
        return {
            "key": self.key,
            "display_name": self.display_name,
            "data_type": self.data_type,
            "display_value": self.display_format,
            "description": self.description,
            "value_range": self.json_range(),
            "higher_is_better": self.higher_is_better,
            "threshold": finite_or_none(self.threshold if threshold is None else threshold),
            "is_primary_metric": self.is_primary if is_primary is None else is_primary,
            "parent_metric": "",
            "exclude": False,
            "role": self.role.value if self.role else None,
            "model_level": self.model_level,
        }

    def fails(self, value: float | None, threshold: float | None = None) -> bool:
        """Whether ``value`` is on the wrong side of the threshold."""
        if value is None or value != value:  # value != value: NaN (float or numpy)
            return False
        t = self.threshold if threshold is None else threshold
        return value < t if self.higher_is_better else value > t


def finite_or_none(value: float | None) -> float | None:
    """``value``, or None for NaN or an infinite one (JSON holds neither)."""
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return None
    return value


@dataclass(slots=True)
class RowResult:
    """Per-row output of an evaluator (slotted: a run holds one per scored row).

    Attributes:
        values: metric key -> value (float) or None where the metric does not apply.
        details: evaluator-specific, JSON-serialisable facts shown in the row's details
            (masked matches, the sentence scores...). Keys become columns of the results.
        error_message: why the row failed (e.g. which part of a condition did not match);
            written as ``result_error_message``.
        actual_output_meta: sentence-level data, as RESULT_FORMAT.md describes.
    """

    values: dict[str, float | None]
    details: JsonObject = field(default_factory=dict)
    error_message: str | None = None
    actual_output_meta: list[OutputMeta] | None = None


@dataclass
class Table:
    """A small table an evaluator wants shown (e.g. a confusion matrix).

    The core writes it to ``work/<name>.json`` and ``work/<name>.csv`` and renders it into
    the HTML fragment and ``work/report.md``; plugins never write files themselves.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    model_key: str | None = None


class Evaluator:
    """Base class of every evaluator.

    Subclasses declare the class attributes below and implement :meth:`evaluate`. The core
    creates one instance per run with validated parameters in ``self.params`` and the
    shared services in ``self.ctx``; :meth:`evaluate` may be called several times (once per
    batch of rows), so an instance may keep caches between calls.
    """

    #: Short stable id users type (``sonar describe text_matching``), declared one way: ``id = "text_matching"``.
    id: ClassVar[str]
    display_name: ClassVar[str]
    tagline: ClassVar[str] = ""
    description: ClassVar[str] = ""
    required_inputs: ClassVar[tuple[Input, ...]] = ()
    #: Inputs used when present but not required (e.g. retrieved context for text matching).
    optional_inputs: ClassVar[tuple[Input, ...]] = ()
    compatibility: ClassVar[tuple[str, ...]] = ("llm", "rag")
    #: True for an evaluator that asks an LLM judge (the judge bases, :mod:`sonar_core.judge_evaluator`, set it
    #: and say which configuration through :meth:`judge_key`): the core checks the judge is available
    #: before any row is scored and names it in the report.
    requires_judge: ClassVar[bool] = False
    supports_gpu: ClassVar[bool] = False
    #: True when the evaluator runs with no network and no model download.
    offline: ClassVar[bool] = True
    kind: ClassVar[ResultKind] = ResultKind.SCORE
    parameters: ClassVar[tuple[Param, ...]] = ()
    metrics: ClassVar[tuple[Metric, ...]] = ()
    #: True when per-row values depend on the other rows (e.g. macro precision): the core then
    #: passes every eligible row in one evaluate() call instead of batches.
    needs_all_rows: ClassVar[bool] = False
    #: True when a failing answer may hold what a report must not repeat (PII, secrets): the
    #: HTML reports then withhold answer texts and show the evaluator's (masked) messages.
    #: The evaluated dataset itself (llm-eval-results) still holds the answers.
    sensitive_outputs: ClassVar[bool] = False
    #: Parameters that name a model, with the model's kind ("embedding", "causal_lm", ...): the core
    #: checks each model is present before any row is scored, and ``sonar models`` lists them.
    model_params: ClassVar[dict[str, str]] = {}
    #: True when the evaluator asks the models under test itself (``ctx.hosts``): a run without
    #: model hosts skips it, saying why.
    requires_hosts: ClassVar[bool] = False
    #: False for an evaluator that only means something on rows made for it (a red-team detector reads the
    #: attack a row carries): the ``offline`` group leaves it out; a run names it to run it.
    joins_offline_group: ClassVar[bool] = True
    #: False when the evaluator perturbs test cases itself: the core does not give it the perturbed
    #: copies (``original_test_case_key`` set) a run's ``perturb:`` made, and the report says so.
    scores_perturbed_copies: ClassVar[bool] = True
    #: True when scoring a row is costly even with every judge answer cached (e.g. a library that
    #: re-renders and re-parses every prompt): the core keeps finished rows in the response cache's
    #: file and a rerun reads them back (sonar_core.execution.row_cache). Bump ``result_version`` whenever the
    #: evaluator's results for the same inputs change.
    caches_row_results: ClassVar[bool] = False
    result_version: ClassVar[str] = "1"
    #: The pip extra of ``sonar-eval`` this evaluator needs beyond the base install (``"models"``,
    #: ``"ragas"``, or several as pip writes them, ``"ragas,models"``); None for the base install.
    #: Without it the evaluator is still listed (``needs: sonar-eval[models]``), and a run skips it
    #: saying what to install (an error under ``--strict``).
    extra: ClassVar[str | None] = None
    #: Import names that prove ``extra`` is installed, e.g. ``("torch", "transformers")``: found
    #: with ``importlib.util.find_spec``, never imported, so listing evaluators stays cheap.
    needs_modules: ClassVar[tuple[str, ...]] = ()
    #: AVID problem type for threshold problems (accuracy, privacy, security, ...).
    problem_type: ClassVar[str] = "accuracy"
    category: ClassVar[str] = "Generation"
    #: Every deliberate difference from the catalogue's entry for this evaluator (see Difference).
    differences: ClassVar[tuple[Difference, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The id has one spelling (docs/plugin-authoring.md); the annotated one still works, with a warning.
        if "id" in cls.__dict__.get("__annotations__", {}):
            value = cls.__dict__.get("id", "...")
            warnings.warn(f"{cls.__module__}.{cls.__qualname__} declares its id as 'id: ClassVar[str] = ...'; "
                          f'write id = "{value}" (the annotated form is deprecated)', DeprecationWarning, stacklevel=2)

    def __init__(self, params: ParamValues, ctx: "EvaluationContext") -> None:
        self.params = params
        self.ctx = ctx

    # -- what a plugin implements -------------------------------------------------------

    def evaluate(self, rows: Sequence["Row"]) -> Iterable[RowResult]:
        """Return one RowResult per row, in order."""
        raise NotImplementedError

    def tables(self, scored: Sequence[tuple["Row", RowResult]]) -> list[Table]:
        """Optional: tables derived from all scored rows (e.g. confusion matrices)."""
        return []

    def extra_problems(self, scored: Sequence[tuple["Row", RowResult]]) -> list[ExtraProblem]:
        """Optional: evaluator-specific problems, as dicts of the problem schema's fields (:class:`ExtraProblem`).

        The core fills in evaluator id/name and the schema version.
        """
        return []

    def extra_insights(self, scored: Sequence[tuple["Row", RowResult]],
                       thresholds: dict[str, float]) -> list[ExtraInsight]:
        """Optional: evaluator-specific insights, as dicts with ``insight_type``, ``description``
        and optionally ``actions_description`` and ``insight_attrs`` (:class:`ExtraInsight`).

        ``thresholds`` maps each metric key to the threshold in force for the run. The core
        fills in evaluator id/name and the schema version, and lists them after the standard
        insights.
        """
        return []

    # -- derived declarations -----------------------------------------------------------

    @classmethod
    def declaration_problem(cls) -> str | None:
        """Why this class is not a usable evaluator declaration, or None.

        Each evaluator base checks what it asks of its subclasses and extends this through
        ``super()``; plugin registration refuses a class with a problem, naming it.
        """
        for attr in ("id", "display_name"):
            if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr):
                return f"{cls.__name__} declares no '{attr}'"
        if not cls.metrics or not all(isinstance(m, Metric) for m in cls.metrics):
            return f"{cls.__name__} declares no metrics"
        primaries = [m.key for m in cls.metrics if m.is_primary]
        if len(primaries) > 1:
            return f"{cls.__name__} declares several primary metrics: {', '.join(primaries)}"
        if cls.evaluate is Evaluator.evaluate:
            return f"{cls.__name__} does not implement evaluate()"
        if cls.needs_modules and not (isinstance(cls.extra, str) and cls.extra):
            return f"{cls.__name__} declares needs_modules but no 'extra' that installs them"
        return None

    @classmethod
    def needs(cls) -> str | None:
        """The requirement to install (``sonar-eval[models]``) when a module the evaluator needs is
        missing; None when it can run on this installation."""
        if cls.extra and extras.missing_modules(cls.needs_modules):
            return extras.requirement(cls.extra)
        return None

    @classmethod
    def missing_extra(cls) -> str | None:
        """Why the evaluator cannot run on this installation (its extra is not installed), or None."""
        missing = extras.missing_modules(cls.needs_modules) if cls.extra else []
        return extras.missing_reason(cls.extra, missing) if missing else None

    @classmethod
    def judge_key(cls, params: ParamValues) -> str | None:
        """The LLM configuration these parameters name for the judge; None means the run's default
        judge. Asked only of evaluators that declare ``requires_judge``."""
        return None

    @classmethod
    def judge_prompt(cls) -> str:
        """The prompt a judge is asked, with its placeholders, as ``sonar describe`` and the catalogue
        show it; empty for an evaluator that declares none."""
        return ""

    @classmethod
    def all_parameters(cls) -> tuple[Param, ...]:
        """Declared parameters plus the common ones, without duplicates."""
        declared = {p.name for p in cls.parameters}
        return tuple(cls.parameters) + tuple(p for p in COMMON_PARAMETERS if p.name not in declared)

    @classmethod
    def inputs_for(cls, params: ParamValues) -> tuple[Input, ...]:
        """The inputs a row needs with these parameters (e.g. the placeholders of a user's prompt);
        the declared ``required_inputs`` unless an evaluator says otherwise."""
        return cls.required_inputs

    @classmethod
    def primary_metric(cls) -> Metric:
        for metric in cls.metrics:
            if metric.is_primary:
                return metric
        return cls.metrics[0]

    @classmethod
    def qualified_name(cls) -> str:
        """``module.Class``: the descriptor id and the result folder's stem."""
        return f"{cls.__module__}.{cls.__qualname__}"

    @classmethod
    def metrics_meta(cls, thresholds: dict[str, float] | None = None) -> list[MetricMeta]:
        """``metrics_meta`` of every metric; ``thresholds`` overrides the defaults."""
        thresholds = thresholds or {}
        primary = cls.primary_metric().key
        return [m.meta(thresholds.get(m.key), m.key == primary) for m in cls.metrics]

    @classmethod
    def metric(cls, key: str) -> Metric:
        for metric in cls.metrics:
            if metric.key == key:
                return metric
        raise KeyError(key)

    @classmethod
    def validate_params(cls, given: JsonObject | None) -> ParamValues:
        """Defaults merged with ``given``, each value coerced and checked.

        Every declared parameter is in the result, so evaluators read ``self.params[name]``.
        An explicit null (``key:`` in YAML) means the default, as if the key were absent.
        """
        given = dict(given or {})
        known = {p.name: p for p in cls.all_parameters()}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ParameterError(
                f"unknown parameter '{unknown[0]}' for evaluator '{cls.id}' "
                f"(known: {', '.join(sorted(known))})"
            )
        params: ParamValues = {}
        for name, param in known.items():
            value = given.get(name)
            if value is None:
                value = param.default
            params[name] = None if value is None else param.coerce(value, cls.id)
        return params

    @classmethod
    def check_with_plugins(cls, params: ParamValues, plugins: "Registries") -> None:
        """Check validated ``params`` against the run's plugin manager before anything runs.

        For a parameter naming something plugins register (a perturbator, say): which names exist
        depends on the run's plugins (``-p`` modules included), which :meth:`validate_params` cannot
        see. Raise ParameterError naming the parameter; nothing to check by default.
        """
