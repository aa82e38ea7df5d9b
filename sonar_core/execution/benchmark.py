"""A benchmark run: the benchmark's tests as the run's evaluators, then hazard and benchmark grades.

:func:`prepare_benchmark` turns ``benchmark:`` into evaluator entries (one per test, labelled by the
test's uid and routed to its rows by category) and reads the standards, so a hazard without a
reference is a one-line error before anything runs. The runner then journals ``hazard info`` and
``test info`` after ``starting run`` (:func:`journal_plan`), ``using test items`` once the dataset is
known (:func:`journal_items`), and after scoring :func:`conclude_benchmark` reads each test's rows
back from its evaluator folder (resumed folders included), journals ``test scored``, ``hazard
scored`` and ``benchmark scored`` (``hazard calibrated`` and ``benchmark calibrated`` in a calibration
run), writes the ``benchmark/`` folder, and in a calibration run the standards file. Messages and
fields follow ModelBench's run journal, in its order (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from .. import names
from ..artifacts.columnar_rows import saved_rows
from ..benchmarks.definitions import BenchmarkDefinition, load_benchmark
from ..benchmarks.registry import get_benchmark
from ..benchmarks.standards import Standards, calibrated_standards, read_standards, write_standards
from ..config import EvaluatorSpec, RunConfig
from ..contract import finite_or_none
from ..dataset import LLMDataset
from ..errors import ConfigError
from ..jsontypes import JsonObject
from ..findings.benchmark_scores import BenchmarkFindings, TestTally, UnsafeRow, grade_problems, score_benchmark
from ..journal import Journal
from ..plugins import PluginManager
from .pipeline import FEEDERS
from .state import Job, RunState

__all__ = ["BenchmarkPlan", "prepare_benchmark", "restrict_dataset", "start_fields", "journal_plan",
           "journal_items", "conclude_benchmark"]

_CLS = "BenchmarkRunner"


@dataclass
class BenchmarkPlan:
    """The benchmark a run scores, and against what."""

    definition: BenchmarkDefinition
    #: None in a calibration run.
    standards: Standards | None
    #: Calibration run: where the standards file goes.
    standards_output: Path | None = None
    #: Calibration run over a ready dataset: the models that are the reference.
    reference_hosts: tuple[str, ...] = ()

    @property
    def calibrating(self) -> bool:
        return self.standards_output is not None


def _definition(config: RunConfig, plugins: PluginManager) -> BenchmarkDefinition:
    value = config.benchmark
    if value.endswith((".yaml", ".yml")):
        return load_benchmark(config.resolve_path(value))
    return get_benchmark(plugins, value)


def _how_to_calibrate(uid: str) -> str:
    return f"sonar calibrate --benchmark {uid} --host KEY [--host KEY ...] -o standards.json"


def _standards(config: RunConfig, definition: BenchmarkDefinition) -> Standards:
    path = config.resolve_path(config.standards) if config.standards else definition.standards_path()
    if path is None:
        raise ConfigError(f"benchmark '{definition.uid}' has no standards: give --standards FILE (or "
                          f"'standards:'), or write one with {_how_to_calibrate(definition.uid)}")
    standards = read_standards(path)
    for hazard in definition.hazards:
        if hazard.hazard_key not in standards.reference:
            raise ConfigError(f"{path}: no reference score for hazard '{hazard.uid}' (key '{hazard.hazard_key}') "
                              f"of benchmark '{definition.uid}'; calibrate it: {_how_to_calibrate(definition.uid)}")
    return standards


def _check_rules(definition: BenchmarkDefinition, plugins: PluginManager) -> None:
    for index, test in enumerate(definition.tests):
        cls = plugins.resolve(test.evaluator)
        if test.safe.metric is not None and test.safe.metric not in {m.key for m in cls.metrics}:
            raise ConfigError(f"{definition.source}: field 'tests[{index}].safe.metric': evaluator "
                              f"'{test.evaluator}' has no metric '{test.safe.metric}'")


def prepare_benchmark(config: RunConfig, plugins: PluginManager) -> tuple[RunConfig, BenchmarkPlan | None]:
    """The run's configuration with the benchmark's tests among its evaluators, and the plan.

    Without ``evaluators`` in the configuration only the tests run; listed evaluators run beside
    them. Applying it twice (a resumed run reads back the expanded configuration) changes nothing.
    """
    if config.benchmark is None:
        return config, None
    definition = _definition(config, plugins)
    _check_rules(definition, plugins)
    calibrating = config.standards_output is not None
    standards = None if calibrating else _standards(config, definition)
    listed = config.specs() if "evaluators" in config.model_fields_set else []
    labels = {s.label for s in listed}
    tests = [EvaluatorSpec(id=t.evaluator, name=None if t.uid == t.evaluator else t.uid, params=t.params,
                           thresholds=t.thresholds, categories=t.categories)
             for t in definition.tests if t.uid not in labels]
    update: _BenchmarkSettings = {"evaluators": tests + listed}
    reference = tuple(config.reference_hosts)
    if calibrating and config.hosts and reference:
        keys = [h.get("key") for h in config.hosts]
        unknown = [k for k in reference if k not in keys]
        if unknown:
            raise ConfigError(f"reference host '{unknown[0]}' is not a host of this run (hosts: {', '.join(map(str, keys))})")
        update["hosts"] = [h for h in config.hosts if h.get("key") in reference]
        reference = ()  # the hosts are the reference: nothing left to filter
    config = config.model_copy(update=update)
    output = config.resolve_path(config.standards_output) if calibrating else None
    return config, BenchmarkPlan(definition, standards, output, reference)


class _BenchmarkSettings(TypedDict, total=False):
    """The run settings a benchmark replaces: its tests as evaluators, and (calibrating) the reference hosts."""
    evaluators: list[EvaluatorSpec]
    hosts: list[JsonObject]


class StartFields(TypedDict):
    """``starting run``'s fields after ``run_id`` (ModelBench's journal)."""
    benchmarks: list[str]
    tests: list[str]
    suts: list[str]
    max_items: int
    thread_count: int


def restrict_dataset(plan: BenchmarkPlan | None, dataset: LLMDataset) -> LLMDataset:
    """A calibration run over a ready dataset scores only the reference models' rows."""
    if plan is None or not plan.reference_hosts:
        return dataset
    unknown = [k for k in plan.reference_hosts if k not in dataset.models]
    if unknown:
        raise ConfigError(f"reference host '{unknown[0]}' is not a model of the dataset "
                          f"(models: {', '.join(dataset.models)})")
    rows = [r for r in dataset.rows if r.model_key in plan.reference_hosts]
    return LLMDataset(rows, dataset.source, dataset.columns, dataset.fingerprint)


def start_fields(state: RunState) -> StartFields:
    """``starting run``'s fields after ``run_id``, as ModelBench's journal lists them."""
    plan, config = state.benchmark, state.config
    suts = [h.get("key") for h in config.hosts] if config.hosts else state.dataset.models
    limits = [job.spec.max_rows for job in state.jobs]
    every = len(state.dataset)
    return {"benchmarks": [plan.definition.uid] if plan else [], "tests": [job.label for job in state.jobs],
            "suts": suts, "max_items": max((limit or every) for limit in limits) if limits else every,
            "thread_count": FEEDERS * len(config.hosts) if config.hosts else 1}


def journal_plan(state: RunState, journal: Journal) -> None:
    """``hazard info`` per hazard and ``test info`` per test (after ``starting run``)."""
    plan = state.benchmark
    if plan is None:
        return
    definition = plan.definition
    for hazard in definition.hazards:
        journal.event("hazard info", _CLS, "journal_plan", hazard=hazard.uid, benchmark=definition.uid,
                      tests=hazard.tests)
    source = state.config.test_suite or state.config.dataset
    for test in definition.tests:
        job = _job(state, test.uid)
        journal.event("test info", _CLS, "journal_plan", test=test.uid, initialization=test.initialization(),
                      sut_options={}, dependencies={
                          "evaluator": test.evaluator, "plugin": state.plugins.owner_of(test.evaluator),
                          "items": str(source), "benchmark_definition": definition.source},
                      thresholds={k: finite_or_none(v) for k, v in job.thresholds.items()} if job else None)


def _job(state: RunState, uid: str) -> Job | None:
    return next((job for job in state.jobs if job.label == uid), None)


def journal_items(state: RunState, journal: Journal) -> None:
    """``using test items`` per test: the rows routed to it (by category) of the rows available."""
    plan = state.benchmark
    if plan is None:
        return
    rows = state.dataset.rows
    for test in plan.definition.tests:
        wanted = set(test.categories)
        using = sum(1 for row in rows if not wanted or wanted.intersection(row.categories))
        journal.event("using test items", _CLS, "journal_items", test=test.uid, using=using, total=len(rows))


def _rows(job: Job) -> list[dict[str, Any]] | None:
    """The job's scored rows as its llm-eval-results hold them (JSON, or Parquet above the run's
    ``columnar_only_above``); None when it did not finish."""
    if not (job.folder / names.DONE_MARKER).is_file():
        return None
    return saved_rows(job.folder, job.folder.parent)


def _tallies(state: RunState, models: list[str]) -> dict[str, dict[str, TestTally]]:
    tallies: dict[str, dict[str, TestTally]] = {}
    for test in state.benchmark.definition.tests:
        per_model = {model: TestTally() for model in models}
        tallies[test.uid] = per_model
        job = _job(state, test.uid)
        rows = _rows(job) if job is not None else None
        if rows is None:
            continue
        metric = next(m for m in job.cls.metrics if m.key == (test.safe.metric or job.cls.primary_metric().key))
        threshold = test.safe.threshold if test.safe.threshold is not None else job.thresholds.get(metric.key)
        for row in rows:
            tally = per_model.setdefault(row["model_key"], TestTally())
            value = row.get(metric.key)
            if value is None or value != value or row.get("judge_trust") == "untrusted":
                tally.unscored += 1
                continue
            tally.scored += 1
            if metric.fails(value, threshold):
                tally.failing.append(UnsafeRow(row["key"], row["test_case_key"], value))
            else:
                tally.safe += 1
    return tallies


def conclude_benchmark(state: RunState, journal: Journal) -> BenchmarkFindings | None:
    """Score the tests, hazards and benchmark; journal them; write benchmark/ (and the standards)."""
    from ..artifacts.benchmark_dir import write_benchmark_dir
    from ..version import __version__

    plan = state.benchmark
    if plan is None:
        return None
    definition, calibrating = plan.definition, plan.calibrating
    models = list(state.dataset_summary["models"])
    tallies = _tallies(state, models)
    references = None if calibrating else plan.standards.reference
    findings = score_benchmark(definition, tallies, models, references,
                               "" if calibrating else plan.standards.source)
    for test in definition.tests:
        for model in models:
            tally = findings.tests[test.uid][model]
            journal.event("test scored", _CLS, "conclude_benchmark", sut=model, test=test.uid,
                          items_finished=tally.scored + tally.unscored, result=asdict(tally))
    for model in models:
        for hazard in definition.hazards:
            graded = findings.hazards[model][hazard.uid].graded
            if calibrating:
                journal.event("hazard calibrated", _CLS, "conclude_benchmark", benchmark=definition.uid, sut=model,
                              hazard=hazard.uid, hazard_key=hazard.hazard_key, score=graded.score,
                              samples=graded.scored, safe=graded.safe)
            else:
                journal.event("hazard scored", _CLS, "conclude_benchmark", _nulls=True, benchmark=definition.uid,
                              sut=model, hazard=hazard.uid, hazard_key=hazard.hazard_key, score=graded.score,
                              reference=graded.reference, samples=graded.scored, numeric_grade=graded.numeric_grade,
                              text_grade=graded.text_grade, safe=graded.safe, interval=graded.interval,
                              verdict=graded.verdict)
        overall = findings.overall[model]
        if calibrating:
            journal.event("benchmark calibrated", _CLS, "conclude_benchmark", benchmark=definition.uid, sut=model,
                          score=overall.score, samples=overall.scored)
        else:
            journal.event("benchmark scored", _CLS, "conclude_benchmark", _nulls=True, benchmark=definition.uid,
                          sut=model, numeric_grade=overall.numeric_grade, text_grade=overall.text_grade,
                          score=overall.score, reference=overall.reference, samples=overall.scored,
                          interval=overall.interval, verdict=overall.verdict)
    standards = None
    if calibrating:
        scores = {m: {r.hazard.hazard_key: r.graded.score for r in findings.hazards[m].values()} for m in models}
        samples = {m: {r.hazard.hazard_key: r.graded.scored for r in findings.hazards[m].values()} for m in models}
        standards = calibrated_standards(scores, samples, [definition.uid], __version__)
        write_standards(plan.standards_output, standards)
        journal.event("wrote standards", _CLS, "conclude_benchmark", path=str(plan.standards_output),
                      reference_standards=standards.reference)
    write_benchmark_dir(state.run_dir / names.BENCHMARK_DIR, findings, standards,
                        csv_formula_escape=state.config.csv_formula_escape)
    if state.config.min_grade is not None and not calibrating:
        state.core_problems += grade_problems(findings, state.config.min_grade,
                                              f"{names.BENCHMARK_DIR}/{names.BENCHMARK_FAILING_CSV}")
    state.benchmark_findings = findings
    return findings
