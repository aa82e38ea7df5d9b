"""run.json: the run record, a versioned model with a docstring per field.

The run builds a :class:`RunRecord` from its state (``sonar_core.execution.record``); this module
only declares the shape and writes it. docs/result-directory.md describes every field, and
tests/test_result_directory.py checks that it names each field declared here.

Field values are written exactly as given (no conversion on the way). The sections'
shapes are declared once, as ``TypedDict`` s (:mod:`.record_shapes`, :mod:`.benchmark_dir`); they are
:data:`AsGiven` here, so that pydantic neither copies, reorders nor drops a key, and
tests/core/test_record_shapes.py checks a real run's run.json against them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import core_schema

from .. import names
from ..jsontypes import JsonObject, JsonValue  # noqa: F401  (JsonValue: JsonObject names it; pydantic resolves the name here)
from .benchmark_dir import BenchmarkJson
from .formats import write_json
from ..dataset import DatasetSummary
from ..llm.ledger import CostsRecord
from .record_shapes import (CalibrationJson, ExecutedJson, LlmJson, PipelineJson,
                            ServicesJson, StatisticsJson, TimingsJson, VersionsJson)

__all__ = ["AsGiven", "RunRecord", "RunOutcome", "OverallResult", "write_run_record"]

_T = TypeVar("_T")


class _TakenAsGiven:
    """pydantic: a field taken as it is given (its type, a ``TypedDict``, is for the reader and the type
    checker; a TypedDict validated by pydantic would be copied in its declared key order, extra keys dropped)."""

    def __get_pydantic_core_schema__(self, source: object, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.any_schema()


#: A record's section whose shape is a ``TypedDict``, written exactly as given.
AsGiven = Annotated[_T, _TakenAsGiven()]


class _Record(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, arbitrary_types_allowed=True, frozen=True)

    def to_json_data(self) -> dict[str, Any]:
        """The fields in declaration order, values untouched (nested records made dicts too);
        optional sections that are None are left out."""
        data: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None and name in self._optional_sections():
                continue
            data[name] = value.to_json_data() if isinstance(value, _Record) else value
        return data

    @classmethod
    def _optional_sections(cls) -> tuple[str, ...]:
        return ()


class OverallResult(_Record):
    """``result.overall_result``: the run's totals."""

    high_severity_problems: int
    """How many HIGH problems the run found (core and evaluators)."""
    medium_severity_problems: int
    """How many MEDIUM problems."""
    low_severity_problems: int
    """How many LOW problems."""
    best_model: str | None
    """The model with the lowest mean rank over evaluators that ranked more than one model; null when none did."""
    failed_explainers: list[str]
    """Labels of the evaluators that failed."""


class RunOutcome(_Record):
    """``result``: what the run scored, ran, skipped and found (H2O Sonar's key names)."""

    dataset: AsGiven[DatasetSummary]
    """The dataset summary: source, fingerprint, shape, columns, models, unique test cases; and
    ``text_cleaned`` (field -> values whose lone surrogates became U+FFFD) when any were (docs/reliability.md);
    ``traces`` (what was read and skipped) in a run of production traces (docs/traces.md)."""
    models: list[str]
    """Model keys, sorted."""
    all_explainer_ids: list[str]
    """Every installed evaluator id."""
    incompatible_explainer_ids: list[str]
    """Evaluators skipped, each for the reason in ``incompatible_explainers``."""
    incompatible_explainers: list[dict[str, str]]
    """``{evaluator, reason}`` for each skipped evaluator."""
    scheduled_explainers: list[str]
    """Evaluator labels, in run order."""
    explainers_parameters: AsGiven[dict[str, JsonObject]]
    """Label -> validated parameters."""
    explainers_thresholds: AsGiven[dict[str, dict[str, float | None]]]
    """Label -> metric key -> threshold in force (null for an infinite one)."""
    executed_explainers: AsGiven[list[ExecutedJson]]
    """One entry per evaluator that ran: job key, ids, folder, status, error, duration, resumed."""
    problems: Any
    """Every problem: the core's own first, then each evaluator's, in run order."""
    insights: Any
    """Every evaluator's insights, in run order."""
    overall_result: OverallResult
    """The run's totals."""


class RunRecord(_Record):
    """run.json: written when the run starts, after each evaluator, and once more at the end."""

    schema_version: str = names.SCHEMA_VERSION
    """Version of this shape (``names.SCHEMA_VERSION``)."""
    run_id: str
    """Name of the run folder."""
    created: str
    """ISO 8601 UTC time the run started, in seconds."""
    status: str
    """``running``, ``success``, ``failed`` (an evaluator failed), ``stopped_by_budget`` (``--max-cost``) or
    ``interrupted`` (Ctrl-C)."""
    progress: float
    """Share of evaluators done, 0-1; 1.0 once finished."""
    error: str
    """Why the run failed or exits non-zero; empty otherwise."""
    interpretation_parameters: AsGiven[JsonObject]
    """The run configuration after defaults; ``--resume`` reads it back."""
    explainers: list[str]
    """Evaluator labels of the run, in order."""
    versions: AsGiven[VersionsJson]
    """``sonar``, ``python`` and each plugin's version."""
    timings: AsGiven[TimingsJson]
    """``seconds``: wall time since the run started."""
    services: AsGiven[ServicesJson]
    """What the run's shared services did (embeddings: texts encoded and cached, models loaded)."""
    plugin_failures: list[dict[str, str]]
    """``{plugin, stage, error}`` for each plugin that failed to load or register."""
    llm: AsGiven[LlmJson] | None
    """The judges: configuration keys, endpoints and models (never a key's value), cache and counters."""
    judge_calibration: AsGiven[dict[str, CalibrationJson]]
    """Judge evaluator label -> its judge's calibration: status (trusted, untrusted, uncalibrated), figures."""
    statistics: AsGiven[StatisticsJson]
    """How intervals and paired tests were computed: confidence level, bootstrap resamples, the fixed seed, methods."""
    pipeline: AsGiven[PipelineJson] | None = None
    """Runs with a test suite and hosts: the suite, its fingerprint, what the hosts were asked and answered."""
    fallbacks: dict[str, list[str]] | None = None
    """Evaluator label -> what its rows scored by a fallback model did not measure (e.g. toxicity on
    alt-profanity-check); only when an evaluator fell back."""
    benchmark: AsGiven[BenchmarkJson] | None = None
    """Benchmark runs (``--benchmark``): the benchmark, its standards, and per model each test's safe items,
    each hazard's score, interval, reference and grade, and the benchmark's (``benchmark/benchmark.json``)."""
    redteam: AsGiven[JsonObject] | None = None
    """Red-team runs (``redteam:``): attack success rates per model and per hazard x technique, hit@k,
    over-refusal, the leaderboard, grades, problems, insights and detector figures (docs/redteam.md)."""
    costs: AsGiven[CostsRecord] | None = None
    """Runs that called a host or judge (or had a budget): ``currency``, and per host, judge and evaluator
    (its judge calls) ``calls``, ``input_tokens``, ``output_tokens``, ``cost`` (null without a price), the
    ``total``, and with ``--max-cost`` the ``budget`` (``max_cost``, ``spent``, ``stopped``); docs/costs.md."""
    result: RunOutcome
    """What the run scored and found."""

    @classmethod
    def _optional_sections(cls) -> tuple[str, ...]:
        return ("pipeline", "fallbacks", "benchmark", "redteam", "costs")


def write_run_record(run_dir: Path, record: RunRecord) -> None:
    """Write ``record`` as ``run_dir``/run.json (atomically: a killed run leaves the previous one)."""
    write_json(run_dir / names.RUN_JSON, record.to_json_data())
