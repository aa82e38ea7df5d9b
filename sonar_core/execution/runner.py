"""One run: load, resolve evaluators, score, derive findings, write every artifact, exit clearly.

The run folder is written as the run goes: each evaluator's folder is complete (done marker
last) before the next evaluator starts, so a run killed at any point resumes with
``--resume`` and recomputes only folders without the marker. Per evaluator the order is
always: score the rows (:mod:`.scoring`), derive the findings (:mod:`sonar_core.findings`),
then serialise them (:mod:`sonar_core.artifacts`).
"""

from __future__ import annotations

import shutil
import time
import traceback
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path

from .. import names
from ..artifacts.evaluator_dir import write_evaluator_dir, write_failed_marker
from ..artifacts.stored import load_summary, stored_summary
from ..config import DEMO_DATASET, RunConfig
from ..dataset import LLMDataset, load_dataset
from ..models import EmbeddingService
from ..errors import EXIT_EVALUATOR_FAILED, EXIT_OK, EXIT_PROBLEMS, ConfigError, PluginError, RunInterrupted
from ..findings import derive_findings
from ..findings.host_problems import host_problems
from ..findings.run_findings import gating_problems
from ..journal import Journal
from ..plugins import PluginManager, get_plugin_manager
from ..run_memo import RunMemo
from .calibration import calibrate_judges, check_calibration_sets
from .choose import make_executor
from .jobs import incompatibilities, missing_columns, resolve_jobs
from .pipeline import item_source, load_suite, run_pipeline
from .previous import PreviousRun
from .progress import ProgressSink
from .record import prepare_index, write_index, write_run_json
from .scoring import job_logger, score_job
from .services import host_service, llm_service
from .state import RunResult, RunServices, RunState

__all__ = ["execute_run", "demo_dataset_path"]


def demo_dataset_path() -> Path:
    return Path(__file__).parent.parent / "demo" / "demo_llm_dataset.json"


def _close_services(services: RunServices) -> None:
    # Hosts, then judges: each journals its cache counters as it closes.
    if services.hosts is not None:
        services.hosts.close()
    services.llm.close()


def execute_run(config: RunConfig, *, resume_dir: Path | None = None, progress: bool = False,
                plugins: PluginManager | None = None, previous: PreviousRun | None = None) -> RunResult:
    """Execute a run described by ``config``; see the module docstring.

    ``resume_dir`` (or ``previous``, that folder's record already read) continues an interrupted run.
    """
    started = time.time()
    plugins = plugins or get_plugin_manager(config.plugins)
    plugins.load()
    if config.strict:
        plugins.raise_for_failures()

    suite_fingerprint = None
    if config.test_suite is not None:
        # The dataset is produced by asking the hosts; the suite stands in for it until then.
        dataset_path = config.resolve_path(config.test_suite)
        suite_rows, suite_columns, suite_fingerprint = load_suite(dataset_path)
        # A bad perturb: entry fails here, before the run starts.
        suite_rows = item_source(suite_rows, config, plugins)
        dataset = LLMDataset(suite_rows, str(dataset_path), suite_columns, suite_fingerprint)
    else:
        dataset_path = demo_dataset_path() if config.dataset == DEMO_DATASET else config.resolve_path(config.dataset)
        dataset = load_dataset(dataset_path)

    if previous is None and resume_dir is not None:
        previous = PreviousRun.open(resume_dir)
    if previous is not None:
        previous.require_folder()
        run_dir = previous.run_dir
        run_id = run_dir.name
        previous.check_data(dataset_fingerprint=dataset.fingerprint, suite_fingerprint=suite_fingerprint)
    else:
        run_id = config.run_id or f"{config.name}-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}"
        run_dir = config.resolve_path(config.output_dir).resolve() / run_id
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ConfigError(f"{run_dir}: run directory exists already (use --resume to continue it)")
    jobs = resolve_jobs(config, plugins, run_id, run_dir)
    if config.calibrate:
        check_calibration_sets(jobs, config.base_dir)

    executor = make_executor(config)  # Ray missing: a one-line error before anything runs
    with ExitStack() as closing:
        # A resumed refresh run keeps what the interrupted run fetched: fresh means since it started.
        llm = llm_service(config, jobs, (previous.started() if previous else None) or started)
        closing.callback(llm.close)
        hosts = host_service(config, plugins, llm) if config.hosts else None
        if hosts is not None:
            closing.callback(hosts.close)
        # A produced dataset's columns are known once the hosts have answered.
        incompatible = incompatibilities(jobs, dataset, columns_known=suite_fingerprint is None, llm=llm,
                                         hosts=hosts)
        if config.strict and incompatible:
            label, reason = next(iter(incompatible.items()))
            raise PluginError(f"evaluator '{label}' cannot run: {reason}")
        run_dir.mkdir(parents=True, exist_ok=True)

        journal = Journal(run_dir / names.JOURNAL)
        # One embedding service per run: every evaluator's texts share its cache and counters.
        services = RunServices(llm=llm, embeddings=EmbeddingService(device=config.device), memo=RunMemo(),
                               plugins=plugins, hosts=hosts, executor=executor)
        closing.callback(journal.close)
        closing.callback(_close_services, services)  # before the journal closes: they journal their counters
        closing.callback(executor.close)  # after the services: their counters come back from it first
        executor.start(run_id, journal, services)
        llm.attach(journal)
        if hosts is not None:
            hosts.attach(journal)
        state = RunState(config=config, run_id=run_id, run_dir=run_dir,
                         created=datetime.now(timezone.utc).isoformat(timespec="seconds"), started=started,
                         jobs=jobs, plugins=plugins, services=services, dataset=dataset,
                         dataset_summary=dataset.summary(), incompatible=incompatible,
                         result=RunResult(run_dir=run_dir, status="running", exit_code=EXIT_OK))
        journal.event("resuming run" if previous else "starting run", "Runner", "execute_run", run_id=run_id,
                      evaluators=[j.label for j in jobs], dataset=str(dataset_path))
        journal.event("loaded plugins", "Runner", "execute_run", plugins=[p.name for p in plugins.plugins])
        for failure in plugins.failures:
            journal.event("plugin failed", "Runner", "execute_run", plugin=failure.name, stage=failure.stage,
                          error=failure.error)
        if hosts is not None:
            _ask_hosts(state, dataset_path, suite_fingerprint, journal, progress)
        journal.event("loaded dataset", "Runner", "execute_run", rows=len(state.dataset),
                      models=state.dataset.models, fingerprint=state.dataset.fingerprint)
        write_run_json(state, status="running")

        try:
            calibrate_judges(state, journal)  # every judge measured before its verdicts are scored
            _run_jobs(state, journal, progress)
        except KeyboardInterrupt:
            journal.event("run interrupted", "Runner", "execute_run", finished=len(state.summaries))
            raise RunInterrupted(run_dir) from None
        _close_services(services)
        # The rows are no longer needed once index.html's drill-down is taken from them (run.json and
        # index.html use the dataset summary): let them go before the problems of every evaluator are
        # read back for the result and index.html.
        prepare_index(state)
        state.dataset = dataset = None

        _journal_service_counters(services, journal)
        _conclude(state)
        write_run_json(state, status=state.result.status)
        write_index(state)
        journal.event("finished run", "Runner", "execute_run", status=state.result.status,
                      exit_code=state.result.exit_code, seconds=round(time.time() - started, 3))
    return state.result


def _ask_hosts(state: RunState, suite_path: Path, suite_fingerprint: str | None, journal: Journal,
               progress: bool) -> None:
    """The pipeline: every test case asked of every host; the answers become the run's dataset."""
    hosts = state.services.hosts
    # run.json first, so a run killed while the hosts answer can be resumed.
    state.pipeline = {"test_suite": str(suite_path), "test_suite_fingerprint": suite_fingerprint}
    write_run_json(state, status="running")
    try:
        with ProgressSink(progress) as sink:
            produced = run_pipeline(suite_path, hosts, state.run_dir, journal, config=state.config,
                                    progress=sink.task if progress else None, plugins=state.plugins,
                                    ask=state.services.executor.asker(hosts, journal))
    except KeyboardInterrupt:
        journal.event("run interrupted", "Runner", "execute_run", finished=0)
        raise RunInterrupted(state.run_dir) from None
    state.dataset = produced.dataset
    state.dataset_summary = produced.dataset.summary()
    state.pipeline = produced.summary()
    state.pipeline_finished = produced.finished_fields()
    state.core_problems = host_problems(produced.counts, produced.failed)
    for job in state.jobs:
        if job.label not in state.incompatible and (reason := missing_columns(job, state.dataset)):
            state.incompatible[job.label] = reason
            if state.config.strict:
                raise PluginError(f"evaluator '{job.label}' cannot run: {reason}")


def _run_jobs(state: RunState, journal: Journal, progress: bool) -> None:
    """Run each job in turn, keeping finished folders (resume) and recording failures."""
    config, result, embeddings = state.config, state.result, state.services.embeddings
    with ProgressSink(progress) as sink:
        embeddings.progress = sink.task if progress else None
        for job in state.jobs:
            entry = {"key": job.job_id, "evaluator_id": job.cls.id, "name": job.label,
                     "explainer_id": job.cls.qualified_name(), "job_location": job.folder.name}
            if (job.folder / names.DONE_MARKER).is_file() and (summary := load_summary(job.folder)):
                journal.event("skipping finished evaluator", "Runner", "execute_run", evaluator=job.label)
                state.summaries.append(stored_summary(summary, job.folder))
                state.executed.append({**entry, "status": "success", "error": "", "duration": None, "resumed": True})
                continue
            if job.folder.exists():
                shutil.rmtree(job.folder)  # an unfinished folder from a killed run
            if job.label in state.incompatible:
                reason = state.incompatible[job.label]
                journal.event("evaluator skipped", "Runner", "execute_run", evaluator=job.label, reason=reason)
                result.skipped.append({"evaluator": job.label, "reason": reason})
                continue
            job_started = time.time()
            logger, handler = job_logger(job)
            journal.event("queuing item", "Runner", "execute_run", evaluator=job.label, job=job.job_id)
            scored = None  # the previous evaluator's rows and results must not outlive its folder
            try:
                label = job.cls.display_name if job.label == job.cls.id else job.label
                scored = score_job(job, state.dataset, state.services, journal, batch_size=config.batch_size,
                                   progress=lambda total: sink.task(label, total=total), logger=logger)
                findings = derive_findings(scored, state.judge_trust.get(job.label))
                summary = stored_summary(write_evaluator_dir(findings, job.folder,
                                                             csv_formula_escape=config.csv_formula_escape),
                                         job.folder)
            except Exception as exc:  # one evaluator's failure must not end the run
                error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                logger.error("evaluator failed: %s\n%s", error, traceback.format_exc())
                write_failed_marker(job.folder, error)
                journal.event("evaluator failed", "Runner", "execute_run", evaluator=job.label, error=error)
                result.failed.append({"evaluator": job.label, "error": error})
                state.executed.append({**entry, "status": "failed", "error": error,
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
            scored = findings = None
            journal.event("wrote artifacts", "Runner", "execute_run", evaluator=job.label, folder=job.folder.name)
            state.summaries.append(summary)
            state.executed.append({**entry, "status": "success", "error": "",
                                   "duration": round(time.time() - job_started, 3)})
            write_run_json(state, status="running")
        journal.event("finished pipeline", "Runner", "execute_run", **state.pipeline_finished)


def _journal_service_counters(services: RunServices, journal: Journal) -> None:
    embeddings, memo = services.embeddings, services.memo
    if embeddings.stats:
        journal.event("embedding cache info", "EmbeddingService", "summary", models=embeddings.summary(),
                      loads=embeddings.loads())
    if memo.puts:
        journal.event("run memo info", "RunMemo", "summary", namespaces=memo.summary())
    memo.clear()


def _conclude(state: RunState) -> None:
    """The run's result: every problem and insight, its status, and its exit code (docs/cli.md)."""
    result, config = state.result, state.config
    result.problems = state.core_problems + [p for s in state.summaries for p in s["problems"]]
    result.insights = [i for s in state.summaries for i in s["insights"]]
    result.executed = state.executed
    result.status = "failed" if result.failed else "success"
    if result.failed:
        result.exit_code = EXIT_EVALUATOR_FAILED
        result.message = f"{len(result.failed)} evaluator(s) failed: " + "; ".join(
            f"{f['evaluator']}: {f['error']}" for f in result.failed)
    if config.fail_on_problems:
        gating = gating_problems(result.problems, config.fail_on_problems)
        if gating and result.exit_code == EXIT_OK:
            result.exit_code = EXIT_PROBLEMS
            result.message = (f"{len(gating)} problem(s) at or above severity {config.fail_on_problems} "
                              f"(--fail-on-problems)")
