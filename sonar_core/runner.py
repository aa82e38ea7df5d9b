"""One run: load, resolve evaluators, score, write every artifact, exit with a clear status.

The run folder is written as the run goes: each evaluator's folder is complete (done marker
last) before the next evaluator starts, so a run killed at any point resumes with
``--resume`` and recomputes only folders without the marker.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from . import names
from .aggregate import ScoredEvaluator, SkippedRow
from .artifacts.evaluator_dir import write_evaluator_dir, write_failed_marker
from .config import ALL_OFFLINE, DEMO_DATASET, EvaluatorSpec, RunConfig
from .context import EvaluationContext
from .contract import Evaluator, Input, ParameterError, RowResult, finite_or_none
from .embeddings import EmbeddingService
from .dataset import LLMDataset, Row, load_dataset
from .hosts.base import HostService
from .hosts.registry import HostServices, build_hosts, prices_from
from .errors import (
    EXIT_EVALUATOR_FAILED,
    EXIT_OK,
    EXIT_PROBLEMS,
    ConfigError,
    PluginError,
    RunInterrupted,
)
from .journal import Journal
from .llm import LLMService, load_llm_configs
from .model_store import ModelMissingError, get_store
from .pipeline import host_problems, item_source, load_suite, run_pipeline
from .plugins import PluginHost, get_host
from .problems import SEVERITY_ORDER
from .row_cache import RowResultCache
from .run_memo import RunMemo
from .run_record import prepare_index, stored_summary, write_index, write_run_json

__all__ = ["Job", "RunResult", "execute_run", "demo_dataset_path", "NO_HOSTS"]

#: Why an evaluator that asks the models under test itself (``requires_hosts``) is skipped.
NO_HOSTS = "the run has no model hosts (hosts: in the configuration); this evaluator asks the models under test itself"

def demo_dataset_path() -> Path:
    return Path(__file__).parent / "demo" / "demo_llm_dataset.json"


@dataclass
class Job:
    """One evaluator to run: class, validated parameters, thresholds and its folder."""

    spec: EvaluatorSpec
    cls: type[Evaluator]
    params: dict[str, Any]
    thresholds: dict[str, float]
    job_id: str
    folder: Path
    #: True when the job came from the ``offline`` group rather than being listed by name.
    implicit: bool = False

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass
class RunResult:
    """What a run produced; ``exit_code`` follows docs/cli.md."""

    run_dir: Path
    status: str
    exit_code: int
    executed: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    insights: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    message: str = ""


def _thresholds(cls: type[Evaluator], params: dict[str, Any], spec: EvaluatorSpec, global_overrides: dict[str, float]) -> dict[str, float]:
    thresholds = {m.key: m.threshold for m in cls.metrics}
    if params.get("metric_threshold") is not None:
        thresholds[cls.primary_metric().key] = params["metric_threshold"]
    for source in (global_overrides, spec.thresholds):
        for key, value in source.items():
            if key in thresholds:
                thresholds[key] = float(value)
    unknown = sorted(set(spec.thresholds) - set(thresholds))
    if unknown:
        raise ConfigError(f"evaluator '{spec.label}': threshold for unknown metric '{unknown[0]}' "
                          f"(metrics: {', '.join(thresholds)})")
    return thresholds


def resolve_jobs(config: RunConfig, host: PluginHost, run_id: str, run_dir: Path) -> list[Job]:
    """Evaluator specs -> jobs, with every id and parameter checked before anything runs."""
    specs: list[EvaluatorSpec] = []
    implicit: set[str] = set()
    for spec in config.specs():
        if spec.id == ALL_OFFLINE:
            explicit = {s.id for s in config.specs() if s.id != ALL_OFFLINE}
            group = [EvaluatorSpec(id=eid) for eid, cls in host.evaluators.items()
                     if cls.offline and not cls.requires_judge and eid not in explicit]
            implicit.update(s.label for s in group)
            specs += group
        else:
            specs.append(spec)
    known_metrics = {m.key for cls in host.evaluators.values() for m in cls.metrics}
    stray = sorted(set(config.thresholds) - known_metrics)
    if stray:
        raise ConfigError(f"threshold for unknown metric '{stray[0]}'")
    jobs, labels = [], set()
    for position, spec in enumerate(specs):
        cls = host.resolve(spec.id)
        if spec.label in labels:
            raise ConfigError(f"evaluator '{spec.label}' is listed twice; give one a distinct 'name'")
        labels.add(spec.label)
        try:
            params = cls.validate_params(spec.params)
        except ParameterError as exc:
            raise ConfigError(str(exc)) from None
        thresholds = _thresholds(cls, params, spec, config.thresholds)
        job_id = names.job_uuid(run_id, spec.label, position)
        jobs.append(Job(spec, cls, params, thresholds, job_id,
                        run_dir / names.evaluator_dir_name(cls.qualified_name(), job_id),
                        implicit=spec.label in implicit))
    return jobs


def missing_models(jobs: list[Job]) -> dict[str, str]:
    """label -> why a job cannot run for lack of a model, for jobs from the ``offline`` group.

    A job listed by name whose model is missing raises :class:`ModelMissingError` instead:
    the user asked for it, so the run stops before any row is scored.
    """
    store = get_store()
    reasons: dict[str, str] = {}
    for job in jobs:
        for param in job.cls.model_params:
            ref = job.params.get(param)
            if not ref:
                continue
            try:
                store.resolve(ref)
            except ModelMissingError as exc:
                if not job.implicit:
                    raise ModelMissingError(f"evaluator '{job.label}': {exc}") from None
                reasons[job.label] = str(exc)
                break
    return reasons


class _ProgressSink:
    """Adapter so the runner can report progress with or without rich."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), transient=False)

    def __enter__(self):
        if self.progress:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress:
            self.progress.__exit__(*exc)

    def task(self, label: str, total: int) -> Callable[[int], None]:
        if not self.progress:
            return lambda n: None
        task_id = self.progress.add_task(label, total=total)
        return lambda n: self.progress.advance(task_id, n)


def _job_logger(job: Job) -> tuple[logging.Logger, logging.Handler]:
    log_dir = job.folder / names.LOG_DIR
    log_dir.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(f"sonar.evaluator.{job.job_id}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.FileHandler(log_dir / names.log_file(job.job_id), encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger, handler


def whole_cases_subset(rows: list[Row], max_rows: int) -> list[Row]:
    """At most ``max_rows`` rows: whole test cases (all their models' rows) in order of first appearance,
    so every model is scored on the same cases; a first case larger than the limit is cut."""
    cases: dict[str, list[Row]] = {}
    for row in rows:
        cases.setdefault(row.test_case_key, []).append(row)
    chosen: list[Row] = []
    for case_rows in cases.values():
        if len(chosen) + len(case_rows) > max_rows:
            break
        chosen += case_rows
    return chosen or rows[:max_rows]


def judge_note(job: Job, llm: LLMService) -> str:
    """The report's line naming a judge evaluator's judge."""
    config = llm.config(llm.judge_key(job.cls.judge_key(job.params)))
    repeats = job.params.get("judge_repeats") or 1
    note = f"Judge: {config.describe()}, each row judged {repeats} time{'s' if repeats != 1 else ''}."
    return note + (f" {config.description}." if config.description else "")


def score_job(job: Job, dataset: LLMDataset, journal: Journal, batch_size: int,
              progress: Callable[[int], Callable[[int], None]], logger: logging.Logger,
              embeddings: EmbeddingService | None = None, llm: LLMService | None = None,
              hosts: HostService | None = None, memo: RunMemo | None = None) -> ScoredEvaluator:
    """Run one evaluator over the dataset's eligible rows; problems of the data are recorded.

    ``progress(total)`` starts a progress bar of ``total`` rows and returns its advance function.
    The journal gets one ``measured batch quality`` line per batch; a run that asked model hosts
    (a ModelBench-style pipeline, whose rows are items the hosts answered) also gets ModelBench's
    ``measured item quality`` per item.
    """
    scored = ScoredEvaluator(cls=job.cls, params=job.params, thresholds=job.thresholds, label=job.label)
    wanted = set(job.spec.categories)
    # An actual answer is always "present" (an empty answer is still scored), so it needs no check.
    required = [needed for needed in job.cls.inputs_for(job.params) if needed is not Input.ACTUAL_ANSWER]
    eligible: list[Row] = []
    copies = 0
    for row in dataset.rows:
        if wanted and not wanted.intersection(row.categories):
            continue
        if row.original_test_case_key and not job.cls.scores_perturbed_copies:
            copies += 1
            continue
        if required:
            missing = next((needed for needed in required if not row.has_input(needed)), None)
            if missing is not None:
                scored.skipped.append(SkippedRow(row, missing))
                continue
        eligible.append(row)
    if scored.skipped:
        journal.event("rows skipped", "Runner", "score_job", evaluator=job.label, rows=len(scored.skipped),
                      reason="empty required input")
    if copies:
        scored.notes.append(f"Perturbed copies of test cases ({copies} rows) are not scored: this evaluator "
                            f"perturbs the original test cases itself.")
    limit = job.spec.max_rows
    if limit is not None and len(eligible) > limit:
        total = len(eligible)
        eligible = whole_cases_subset(eligible, limit)
        scored.notes.append(f"Subset: {len(eligible)} of {total} eligible rows scored (max_rows: {limit}); "
                            f"whole test cases in dataset order, so the figures describe only these rows.")
        journal.event("rows limited", "Runner", "score_job", evaluator=job.label, rows=len(eligible),
                      eligible=total, max_rows=limit)
    if job.cls.requires_judge and llm is not None:
        scored.notes.append(judge_note(job, llm))
    logger.info("scoring %d rows (%d skipped for empty required inputs)", len(eligible), len(scored.skipped))
    advance = progress(len(eligible))
    ctx = EvaluationContext(logger=logger, embeddings=embeddings,
                            device=embeddings.device_setting if embeddings else "auto", llm=llm,
                            label=job.label, hosts=hosts, memo=memo if memo is not None else RunMemo())
    evaluator = job.cls(job.params, ctx)
    # Some evaluators (e.g. classification's per-model precision) need every row at once.
    size = (len(eligible) or 1) if job.cls.needs_all_rows else batch_size
    primary = job.cls.primary_metric()
    threshold = job.thresholds[primary.key]
    row_cache = _row_cache(job, llm)
    cached: dict[int, RowResult] = {}
    keys: list[str] = []
    if row_cache is not None:
        keys = [row_cache.key(row) for row in eligible]
        for index, key in enumerate(keys):
            hit = row_cache.get(key)
            if hit is not None:
                cached[index] = hit
        if cached:
            journal.event("using cached row results", "Runner", "score_job", evaluator=job.label,
                          rows=len(cached), total=len(eligible))
            advance(len(cached))
    to_score = [index for index in range(len(eligible)) if index not in cached]
    fresh: dict[int, RowResult] = {}
    for number, start in enumerate(range(0, len(to_score), size), start=1):
        batch_started = time.perf_counter()
        indices = to_score[start:start + size]
        batch = [eligible[index] for index in indices]
        results = list(evaluator.evaluate(batch))
        if len(results) != len(batch):
            raise RuntimeError(f"evaluator returned {len(results)} results for a batch of {len(batch)} rows")
        for index, result in zip(indices, results):
            fresh[index] = result
            if row_cache is not None:
                row_cache.put(keys[index], result)
        if hosts is not None:
            # Pipeline items: as many as the hosts answered, each worth its line (ModelBench's journal).
            share = round((time.perf_counter() - batch_started) / max(len(batch), 1), 6)
            journal.events("measured item quality", "Runner", "score_job", (
                {"evaluator": job.label, "test_case_key": row.test_case_key, "model_key": row.model_key,
                 "measurements": {k: finite_or_none(v) for k, v in result.values.items()},
                 "metric": primary.key, "value": finite_or_none(result.values.get(primary.key)), "run_time": share}
                for row, result in zip(batch, results)))
        # One summary per batch, not one line per row: the row values are in llm-eval-results.
        values = [v for v in (result.values.get(primary.key) for result in results) if v is not None and v == v]
        journal.event("measured batch quality", "Runner", "score_job", evaluator=job.label, batch=number,
                      rows=len(batch), done=start + len(batch), total=len(to_score), metric=primary.key,
                      mean=math.fsum(values) / len(values) if values else None,
                      failing=sum(1 for v in values if primary.fails(v, threshold)),
                      seconds=round(time.perf_counter() - batch_started, 3))
        advance(len(batch))
    # Dataset order, cached and fresh rows together.
    scored.scored.extend((row, cached[i] if i in cached else fresh[i]) for i, row in enumerate(eligible))
    scored.tables = list(evaluator.tables(scored.scored))
    scored.extra_problems = list(evaluator.extra_problems(scored.scored))
    scored.extra_insights = list(evaluator.extra_insights(scored.scored, dict(scored.thresholds)))
    return scored


def _row_cache(job: Job, llm: LLMService | None) -> RowResultCache | None:
    """The cache of the job's finished rows, for evaluators that keep them (``caches_row_results``)."""
    if not getattr(job.cls, "caches_row_results", False) or llm is None:
        return None
    cache = llm.cache
    if cache is None:
        return None
    identity = None
    if job.cls.requires_judge:
        identity = llm.config(llm.judge_key(job.cls.judge_key(job.params))).identity()
    return RowResultCache(cache, job.cls, job.params, identity)


def _missing_columns(job: Job, dataset: LLMDataset) -> str | None:
    """Why the dataset cannot feed ``job`` at all (no column for a required input), or None."""
    missing = [needed.value for needed in job.cls.inputs_for(job.params) if not dataset.has_column_for(needed)]
    return f"the dataset has no column for required input(s): {', '.join(missing)}" if missing else None


def _load_summary(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def execute_run(config: RunConfig, *, resume_dir: Path | None = None, progress: bool = False,
                host: PluginHost | None = None) -> RunResult:
    """Execute a run described by ``config``; see the module docstring."""
    started = time.time()
    host = host or get_host(config.plugins)
    host.load()
    if config.strict:
        host.raise_for_failures()

    suite_fingerprint = None
    if config.test_suite is not None:
        # The dataset is produced by asking the hosts; the suite stands in for it until then.
        dataset_path = config.resolve_path(config.test_suite)
        suite_rows, suite_columns, suite_fingerprint = load_suite(dataset_path)
        # A bad perturb: entry fails here, before the run starts.
        suite_rows = item_source(suite_rows, config, host)
        dataset = LLMDataset(suite_rows, str(dataset_path), suite_columns, suite_fingerprint)
    else:
        dataset_path = demo_dataset_path() if config.dataset == DEMO_DATASET else config.resolve_path(config.dataset)
        dataset = load_dataset(dataset_path)

    if resume_dir is not None:
        run_dir = Path(resume_dir)
        previous = run_dir / names.RUN_JSON
        if not run_dir.is_dir():
            raise ConfigError(f"{run_dir}: no such run directory to resume")
        run_id = run_dir.name
        if previous.is_file():
            record = json.loads(previous.read_text(encoding="utf-8"))
            if suite_fingerprint is not None:
                recorded_suite = (record.get("pipeline") or {}).get("test_suite_fingerprint")
                if recorded_suite not in (None, suite_fingerprint):
                    raise ConfigError(f"{run_dir}: the test suite changed since this run started; "
                                      f"start a new run instead")
            else:
                recorded = record.get("result", {}).get("dataset", {})
                if recorded.get("fingerprint") not in (None, dataset.fingerprint):
                    raise ConfigError(f"{run_dir}: the dataset changed since this run started; "
                                      f"start a new run instead")
    else:
        run_id = config.run_id or f"{config.name}-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}"
        run_dir = config.resolve_path(config.output_dir).resolve() / run_id
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ConfigError(f"{run_dir}: run directory exists already (use --resume to continue it)")
    jobs = resolve_jobs(config, host, run_id, run_dir)
    llm = _llm_service(config, jobs, resume_dir, run_dir, started)
    # A produced dataset's columns are known once the hosts have answered.
    incompatible = {job.label: reason for job in jobs
                    if suite_fingerprint is None and (reason := _missing_columns(job, dataset))}
    hosts = _hosts(config, host, llm) if config.hosts else None
    for label, reason in missing_models(jobs).items():
        incompatible.setdefault(label, reason)
    for job in jobs:
        if job.cls.requires_hosts and hosts is None:
            incompatible.setdefault(job.label, NO_HOSTS)
    for job in jobs:
        if job.cls.requires_judge and job.label not in incompatible:
            reason = llm.unavailable(llm.judge_key(job.cls.judge_key(job.params)))
            if reason:
                incompatible[job.label] = reason
    if config.strict and incompatible:
        label, reason = next(iter(incompatible.items()))
        raise PluginError(f"evaluator '{label}' cannot run: {reason}")
    run_dir.mkdir(parents=True, exist_ok=True)

    journal = Journal(run_dir / names.JOURNAL)
    llm.attach(journal)
    if hosts is not None:
        hosts.attach(journal)
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    journal.event("resuming run" if resume_dir else "starting run", "Runner", "execute_run", run_id=run_id,
                  evaluators=[j.label for j in jobs], dataset=str(dataset_path))
    journal.event("loaded plugins", "Runner", "execute_run", plugins=[p.name for p in host.plugins])
    for failure in host.failures:
        journal.event("plugin failed", "Runner", "execute_run", plugin=failure.name, stage=failure.stage,
                      error=failure.error)
    result = RunResult(run_dir=run_dir, status="running", exit_code=EXIT_OK)
    summaries: list[dict[str, Any]] = []
    executed: list[dict[str, Any]] = []
    # One embedding service per run: every evaluator's texts share its cache and counters.
    embeddings = EmbeddingService(device=config.device)
    base = {"run_id": run_id, "created": created, "config": config, "dataset": dataset, "jobs": jobs,
            "host": host, "started": started, "embeddings": embeddings, "llm": llm, "hosts": hosts,
            "memo": RunMemo(),
            "core_problems": [], "dataset_summary": dataset.summary()}
    if hosts is not None:
        # run.json first, so a run killed while the hosts answer can be resumed.
        base["pipeline"] = {"test_suite": str(dataset_path), "test_suite_fingerprint": suite_fingerprint}
        write_run_json(run_dir, base, executed, result, summaries, status="running")
        try:
            with _ProgressSink(progress) as sink:
                produced = run_pipeline(dataset_path, hosts, run_dir, journal, config=config,
                                        progress=sink.task if progress else None, plugin_host=host)
        except KeyboardInterrupt:
            journal.event("run interrupted", "Runner", "execute_run", finished=0)
            hosts.close()
            llm.close()
            journal.close()
            raise RunInterrupted(run_dir) from None
        dataset = base["dataset"] = produced.dataset
        base["dataset_summary"] = dataset.summary()
        base["pipeline"] = produced.summary()
        base["pipeline_finished"] = produced.finished_fields()
        base["core_problems"] = host_problems(produced)
        for job in jobs:
            if job.label not in incompatible and (reason := _missing_columns(job, dataset)):
                incompatible[job.label] = reason
                if config.strict:
                    hosts.close()
                    llm.close()
                    journal.close()
                    raise PluginError(f"evaluator '{job.label}' cannot run: {reason}")
    journal.event("loaded dataset", "Runner", "execute_run", rows=len(dataset), models=dataset.models,
                  fingerprint=dataset.fingerprint)
    write_run_json(run_dir, base, executed, result, summaries, status="running")

    try:
        _run_jobs(base, incompatible, journal, result, summaries, executed, progress)
    except KeyboardInterrupt:
        journal.event("run interrupted", "Runner", "execute_run", finished=len(summaries))
        if hosts is not None:
            hosts.close()
        llm.close()
        journal.close()
        raise RunInterrupted(run_dir) from None
    if hosts is not None:
        hosts.close()
    llm.close()
    # The rows are no longer needed once index.html's drill-down is taken from them (run.json and
    # index.html use the dataset summary): let them go before the problems of every evaluator are
    # read back for the result and index.html.
    prepare_index(base, summaries)
    del base["dataset"], dataset

    if embeddings.stats:
        journal.event("embedding cache info", "EmbeddingService", "summary", models=embeddings.summary(),
                      loads=embeddings.loads())
    memo: RunMemo = base.pop("memo")
    if memo.puts:
        journal.event("run memo info", "RunMemo", "summary", namespaces=memo.summary())
    memo.clear()
    result.problems = base["core_problems"] + [p for s in summaries for p in s["problems"]]
    result.insights = [i for s in summaries for i in s["insights"]]
    result.executed = executed
    result.status = "failed" if result.failed else "success"
    if result.failed:
        result.exit_code = EXIT_EVALUATOR_FAILED
        result.message = f"{len(result.failed)} evaluator(s) failed: " + "; ".join(
            f"{f['evaluator']}: {f['error']}" for f in result.failed)
    if config.fail_on_problems:
        limit = SEVERITY_ORDER[config.fail_on_problems]
        gating = [p for p in result.problems if SEVERITY_ORDER.get(p["severity"], 9) <= limit]
        if gating and result.exit_code == EXIT_OK:
            result.exit_code = EXIT_PROBLEMS
            result.message = (f"{len(gating)} problem(s) at or above severity {config.fail_on_problems} "
                              f"(--fail-on-problems)")
    write_run_json(run_dir, base, executed, result, summaries, status=result.status)
    write_index(run_dir, base, result, summaries)
    journal.event("finished run", "Runner", "execute_run", status=result.status, exit_code=result.exit_code,
                  seconds=round(time.time() - started, 3))
    journal.close()
    return result


def _llm_service(config: RunConfig, jobs: list[Job], resume_dir: Path | None, run_dir: Path,
                 started: float) -> LLMService:
    """The run's LLM service; every judge key the jobs name is checked here, before anything runs."""
    path = config.resolve_path(config.llm_configs) if config.llm_configs else None
    configs = load_llm_configs(path, required=path is not None)
    fresh_since = started
    if resume_dir is not None:
        # A resumed refresh run keeps what the interrupted run fetched: fresh means since it started.
        try:
            created = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["created"]
            fresh_since = datetime.fromisoformat(created).timestamp()
        except (OSError, KeyError, ValueError):
            pass
    llm = LLMService(configs, default_judge=config.default_judge,
                     cache_path=config.resolve_path(config.llm_cache) if config.llm_cache else None,
                     cache_mode=config.cache_mode, fresh_since=fresh_since)
    llm.judge_key(None)  # an unknown default judge is a configuration error now
    for job in jobs:
        if job.cls.requires_judge:
            try:
                llm.judge_key(job.cls.judge_key(job.params))
            except ConfigError as exc:
                raise ConfigError(f"evaluator '{job.label}': {exc}") from None
    return llm


def _hosts(config: RunConfig, plugins: PluginHost, llm: LLMService) -> HostService:
    """The run's models under test, every entry and price checked before anything runs."""
    keys = [str(entry.get("key")) for entry in config.hosts if isinstance(entry, dict)]
    services = HostServices(cache=llm.cache, device=config.device, base_dir=config.base_dir,
                            prices=prices_from(config.prices, keys), redact=llm.redact)
    return build_hosts(config.hosts, services, plugins)


def _run_jobs(base: dict[str, Any], incompatible: dict[str, str], journal: Journal, result: RunResult,
              summaries: list[dict[str, Any]], executed: list[dict[str, Any]], progress: bool) -> None:
    """Run each job in turn, keeping finished folders (resume) and recording failures."""
    dataset: LLMDataset = base["dataset"]
    config: RunConfig = base["config"]
    embeddings: EmbeddingService = base["embeddings"]
    with _ProgressSink(progress) as sink:
        embeddings.progress = sink.task if progress else None
        for job in base["jobs"]:
            entry = {"key": job.job_id, "evaluator_id": job.cls.id, "name": job.label,
                     "explainer_id": job.cls.qualified_name(), "job_location": job.folder.name}
            if (job.folder / names.DONE_MARKER).is_file() and (summary := _load_summary(job.folder)):
                journal.event("skipping finished evaluator", "Runner", "execute_run", evaluator=job.label)
                summaries.append(stored_summary(summary, job.folder))
                executed.append({**entry, "status": "success", "error": "", "duration": None, "resumed": True})
                continue
            if job.folder.exists():
                shutil.rmtree(job.folder)  # an unfinished folder from a killed run
            if job.label in incompatible:
                reason = incompatible[job.label]
                journal.event("evaluator skipped", "Runner", "execute_run", evaluator=job.label, reason=reason)
                result.skipped.append({"evaluator": job.label, "reason": reason})
                continue
            job_started = time.time()
            logger, handler = _job_logger(job)
            journal.event("queuing item", "Runner", "execute_run", evaluator=job.label, job=job.job_id)
            scored = None  # the previous evaluator's rows and results must not outlive its folder
            try:
                label = job.cls.display_name if job.label == job.cls.id else job.label
                scored = score_job(job, dataset, journal, config.batch_size,
                                   lambda total: sink.task(label, total=total), logger, embeddings,
                                   llm=base["llm"], hosts=base.get("hosts"), memo=base["memo"])
                summary = stored_summary(write_evaluator_dir(scored, job.folder,
                                                             csv_formula_escape=config.csv_formula_escape),
                                         job.folder)
            except Exception as exc:  # one evaluator's failure must not end the run
                error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                logger.error("evaluator failed: %s\n%s", error, traceback.format_exc())
                write_failed_marker(job.folder, error)
                journal.event("evaluator failed", "Runner", "execute_run", evaluator=job.label, error=error)
                result.failed.append({"evaluator": job.label, "error": error})
                executed.append({**entry, "status": "failed", "error": error,
                                 "duration": round(time.time() - job_started, 3)})
                continue
            finally:
                logger.removeHandler(handler)
                handler.close()
            journal.event("evaluator scored", "Runner", "execute_run", evaluator=job.label, rows=len(scored.scored),
                          skipped_rows=len(scored.skipped), problems=len(summary["problems"]),
                          metric=scored.primary.key, means={model: values[scored.primary.key]
                                                            for model, values in scored.aggregates().items()},
                          seconds=round(time.time() - job_started, 3))
            scored = None
            journal.event("wrote artifacts", "Runner", "execute_run", evaluator=job.label, folder=job.folder.name)
            summaries.append(summary)
            executed.append({**entry, "status": "success", "error": "", "duration": round(time.time() - job_started, 3)})
            write_run_json(result.run_dir, base, executed, result, summaries, status="running")
        journal.event("finished pipeline", "Runner", "execute_run", **base.get("pipeline_finished", {}))


