"""The run's typed state: what a run is doing, shared by orchestration, scoring and the record.

:class:`Job` is one evaluator to run; :class:`RunServices` are the services the run made once
and hands to every evaluator (through the evaluation context); :class:`RunState` is everything
the run knows as it goes, the one object run.json and index.html are written from;
:class:`ExecutionResult` is what the caller gets back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import EvaluatorSpec, RunConfig
from ..contract import Evaluator

if TYPE_CHECKING:  # pragma: no cover
    from ..artifacts.drilldown import Casebook
    from ..artifacts.record_shapes import (CalibrationJson, ExecutedJson, InsightJson,
                                           PipelineJson, ProblemJson)
    from ..jsontypes import JsonObject
    from ..dataset import DatasetSummary, LLMDataset
    from ..findings.judge_trust import JudgeTrust
    from ..findings.types import EvaluatorSummary, Problem
    from ..models import EmbeddingService
    from ..hosts.base import HostPool
    from ..llm import LLMService
    from ..llm.ledger import CostsRecord
    from ..plugins import PluginManager
    from ..run_memo import RunMemo

__all__ = ["Job", "ExecutionResult", "RunServices", "RunState"]


@dataclass(frozen=True)
class Job:
    """One evaluator to run: class, validated parameters, thresholds and its folder."""

    spec: EvaluatorSpec
    cls: type[Evaluator]
    params: JsonObject
    thresholds: dict[str, float]
    job_id: str
    folder: Path
    #: True when the job came from the ``offline`` group rather than being listed by name.
    implicit: bool = False

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass
class ExecutionResult:
    """What a run produced; ``exit_code`` follows docs/cli.md."""

    run_dir: Path
    status: str
    exit_code: int
    executed: list[ExecutedJson] = field(default_factory=list)
    problems: list[ProblemJson] = field(default_factory=list)
    insights: list[InsightJson] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    message: str = ""
    #: run.json's ``costs`` (a dry run: its estimate, :meth:`~sonar_core.llm.ledger.CostLedger.estimate_record`).
    costs: CostsRecord | None = None


@dataclass(frozen=True)
class RunServices:
    """The services a run makes once: every evaluator's context is built from these."""

    llm: "LLMService"
    embeddings: "EmbeddingService"
    memo: "RunMemo"
    #: The run's plugin manager (its ``-p`` modules included): registered perturbators and the like.
    plugins: "PluginManager"
    #: The models under test; None when the run scores a ready dataset.
    hosts: "HostPool | None" = None
    #: Where rows are scored (:mod:`.executors`); None: here, in this process.
    executor: Any = None


@dataclass
class RunState:
    """Everything a run knows as it goes; run.json and index.html are written from it alone.

    The first group is fixed when the run starts. ``dataset`` is replaced once when hosts answer
    a test suite, and dropped (None) once index.html's drill-down has been taken from its rows.
    """

    config: RunConfig
    run_id: str
    run_dir: Path
    #: ISO 8601 UTC time the run started, in seconds.
    created: str
    #: ``time.time()`` when the run started (for run.json's ``timings``).
    started: float
    jobs: list[Job]
    plugins: "PluginManager"
    services: RunServices
    dataset: "LLMDataset | None"
    dataset_summary: DatasetSummary
    result: ExecutionResult
    #: Settings of a run with a test suite and hosts (``test_suite``, its fingerprint, then counts).
    pipeline: PipelineJson | None = None
    #: What the journal's ``finished pipeline`` event carries (its fields, as the journal writes them).
    pipeline_finished: JsonObject = field(default_factory=dict)
    #: Problems the core found itself (failing hosts, skipped spans, grades below the minimum).
    core_problems: list["Problem"] = field(default_factory=list)
    #: One entry per evaluator that ran (run.json's ``executed_explainers``).
    executed: list[ExecutedJson] = field(default_factory=list)
    #: Each finished evaluator's summary (its leaderboard, problems, insights, view, test cases), in run order.
    summaries: list["EvaluatorSummary"] = field(default_factory=list)
    #: Label -> why the evaluator cannot run on this dataset (skipped, or an error under --strict).
    incompatible: dict[str, str] = field(default_factory=dict)
    #: Label -> how far each judge evaluator's judge is to be believed (its calibration).
    judge_trust: dict[str, "JudgeTrust"] = field(default_factory=dict)
    #: Label -> the calibration as run.json records it (trust, figures, confusion matrix).
    judge_calibration: dict[str, CalibrationJson] = field(default_factory=dict)
    #: Why nothing could be scored (every item failed), naming the first failure; the run then exits 1.
    unscored: str | None = None
    #: index.html's drill-down and per-model speed and cost, taken from the rows before they go.
    casebook: "Casebook | None" = None
    model_stats: dict[str, dict[str, float | int | None]] | None = None
    #: The benchmark the run scores (``benchmark:``), and its findings once scored.
    benchmark: Any = None
    benchmark_findings: Any = None
    #: A red-team run's own insights (its problems join ``core_problems``) and run.json's ``redteam`` section.
    core_insights: list[Any] = field(default_factory=list)
    redteam_record: JsonObject | None = None
    #: The run's tokens, cost and budget (:class:`~sonar_core.llm.ledger.CostLedger`).
    ledger: Any = None

    @property
    def progress(self) -> float:
        """Share of evaluators done, while the run goes."""
        return round(len(self.executed) / max(len(self.jobs), 1), 4)
