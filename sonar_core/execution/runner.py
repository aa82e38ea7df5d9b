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
from ..artifacts.evaluator_dir import mark_finished, write_evaluator_dir, write_failed_marker
from ..artifacts.columnar import write_run_dataset
from ..artifacts.stored import load_summary, stored_summary
from ..config import DEMO_DATASET, RunConfig
from ..dataset import LLMDataset, load_dataset
from ..epoch_names import check_dataset_epochs
from ..generation.in_run import generate_for_run
from ..models import EmbeddingService
from ..errors import (EXIT_EVALUATOR_FAILED, EXIT_OK, EXIT_PROBLEMS, BudgetExceeded, ConfigError, OutputError,
                      PluginError, RunInterrupted)
from ..findings import derive_findings
from ..findings.host_problems import host_problems
from ..findings.run_findings import gating_problems
from ..journal import Journal
from ..llm.cache import CacheUnreadable
from ..plugins import PluginManager, get_plugin_manager
from ..run_memo import RunMemo
from .benchmark import conclude_benchmark, journal_items, journal_plan, prepare_benchmark, restrict_dataset, start_fields
from .calibration import calibrate_judges, check_calibration_sets, dry_run_outcomes
from .choose import make_executor
from .interrupt import interrupt_guard
from .jobs import incompatibilities, missing_columns, resolve_jobs
from .output_dir import check_writable, resolved, run_folder
from .pipeline import item_source, load_suite, run_pipeline
from .previous import PreviousRun
from .redteam import conclude_redteam, prepare_redteam
from .progress import ProgressSink
from .record import prepare_index, run_items, stats_settings, write_index, write_run_json
from .scoring import job_logger, score_job
from .services import cost_ledger, host_service, llm_service
from .trace_input import load_trace_input, note_trace_input, write_trace_annotations
from .cache_keys import record_cache_keys
from .state import ExecutionResult, RunServices, RunState

__all__ = ["execute_run", "demo_dataset_path"]


def demo_dataset_path() -> Path:
    return Path(__file__).parent.parent / "demo" / "demo_llm_dataset.json"


def _close_services(services: RunServices) -> None:
    # Hosts, then judges: each journals its cache counters as it closes.
    if services.hosts is not None:
        services.hosts.close()
    services.llm.close()


def execute_run(config: RunConfig, *, resume_dir: Path | None = None, progress: bool = False,
                plugins: PluginManager | None = None, previous: PreviousRun | None = None,
                replayed: dict[str, str] | None = None, dry: bool = False,
                dataset_source: str | None = None) -> ExecutionResult:
    """Execute a run described by ``config``; see the module docstring.

    ``resume_dir`` (or ``previous``, that folder's record already read) continues an interrupted run.
    ``replayed``: replaying an evidence pack, the packed run's incompatible evaluators (label -> reason),
    skipped again for the same reasons instead of checking this machine's models and judges.
    A write that fails raises :class:`OutputError` naming the file (docs/reliability.md). ``dry``: the
    run of a dry run (:mod:`.dry_run`): nothing asked, no cache written, the estimate in ``costs``.
    ``dataset_source``: the name the record gives the dataset (a replay: the packed run's, which its rows
    stand for), instead of its path.
    """
    made: dict[str, Path] = {}
    try:
        return _execute_run(config, resume_dir=resume_dir, progress=progress, plugins=plugins, previous=previous,
                            made=made, replayed=replayed, dry=dry, dataset_source=dataset_source)
    except OSError as exc:
        new = made.get("run_dir")
        if new is not None and not (new / names.RUN_JSON).exists():
            # A new run that failed before its run.json: nothing to resume, and a folder left behind
            # would stop the same command from running again.
            shutil.rmtree(new, ignore_errors=True)
            raise OutputError.from_os_error(exc, kept=False) from None
        raise OutputError.from_os_error(exc) from None


def _execute_run(config: RunConfig, *, resume_dir: Path | None, progress: bool, plugins: PluginManager | None,
                 previous: PreviousRun | None, made: dict[str, Path],
                 replayed: dict[str, str] | None = None, dry: bool = False,
                 dataset_source: str | None = None) -> ExecutionResult:
    started = time.time()
    shown = config  # paths as the user gave them: the report shows them so
    if config.base_dir is None:
        # The run records the folder its relative paths lead from, so `--resume` and `sonar pack` work
        # from any working directory (docs/result-directory.md: base_dir).
        config = config.model_copy(update={"base_dir": str(Path.cwd())})
    # Before any work: a run that cannot write its results must not find out after scoring.
    resuming = previous.run_dir if previous is not None else resume_dir
    check_writable(resuming if resuming is not None else resolved(config.resolve_path(config.output_dir)))
    plugins = plugins or get_plugin_manager(config.plugins)
    plugins.load()
    if config.strict:
        plugins.raise_for_failures()
    # A benchmark's tests become the run's evaluators; its standards are checked before anything runs.
    config, benchmark = prepare_benchmark(config, plugins)
    config = prepare_redteam(config, plugins)  # a redteam: section becomes the test suite and its detectors
    suite_fingerprint = None
    generate_for_run(config, dry=dry)  # a generate: section writes the test suite first (docs/generate.md)
    if config.test_suite is not None:
        # The dataset is produced by asking the hosts; the suite stands in for it until then.
        dataset_path = config.resolve_path(config.test_suite)
        suite_rows, suite_columns, suite_fingerprint = load_suite(dataset_path)
        suite_rows = item_source(suite_rows, config, plugins)  # a bad perturb: entry fails here, before the run
        dataset = LLMDataset(suite_rows, str(shown.resolve_path(config.test_suite)), suite_columns, suite_fingerprint)
    elif config.traces is not None:  # production spans (docs/traces.md)
        dataset = load_trace_input(config)
        dataset_path = Path(dataset.source)
    else:
        dataset_path = demo_dataset_path() if config.dataset == DEMO_DATASET else config.resolve_path(config.dataset)
        dataset = restrict_dataset(benchmark, load_dataset(dataset_path))
        check_dataset_epochs(config.epoch_reducer, dataset.rows, str(dataset_path))  # pass_at_K: K epochs at least
        if config.dataset != DEMO_DATASET:
            dataset.source = str(shown.resolve_path(config.dataset))

    if previous is None and resume_dir is not None:
        previous = PreviousRun.open(resume_dir)
    if previous is not None:
        previous.require_folder()
        run_dir = previous.run_dir
        run_id = run_dir.name
        previous.check_data(dataset_fingerprint=dataset.fingerprint, suite_fingerprint=suite_fingerprint)
        # The report names the data as the run's first part did (before base_dir was recorded).
        dataset.source = previous.dataset_source() or dataset.source
    else:
        run_id = config.run_id or f"{config.name}-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}"
        run_dir = run_folder(config.resolve_path(config.output_dir), run_id)
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ConfigError(f"{run_dir}: run directory exists already (use --resume to continue it)")
    if dataset_source is not None:
        dataset.source = dataset_source
    config = config.model_copy(update={"run_id": run_id})  # run.json records the id the run was given or took
    jobs = resolve_jobs(config, plugins, run_id, run_dir)
    check_calibration_sets(jobs, config)

    executor = make_executor(config)  # Ray missing: a one-line error before anything runs
    with ExitStack() as closing:
        # A resumed refresh run keeps what the interrupted run fetched: fresh means since it started.
        llm = llm_service(config, jobs, (previous.started() if previous else None) or started)
        closing.callback(llm.close)
        hosts = host_service(config, plugins, llm) if config.hosts else None
        if hosts is not None:
            closing.callback(hosts.close)
        ledger = cost_ledger(config, llm, hosts, dry=dry, previous=(previous.record or {}).get("costs")
                             if previous is not None else None)
        if dry and llm.cache is not None:
            llm.cache.read_only = True  # a dry run looks the caches up and writes nothing
        # A produced dataset's columns are known once the hosts have answered.
        incompatible = incompatibilities(jobs, dataset, columns_known=suite_fingerprint is None, llm=llm,
                                         hosts=hosts, replayed=replayed)
        if config.strict and incompatible:
            label, reason = next(iter(incompatible.items()))
            raise PluginError(f"evaluator '{label}' cannot run: {reason}")
        if previous is None:
            made["run_dir"] = run_dir  # a new run's folder (empty, or not there yet)
        run_dir.mkdir(parents=True, exist_ok=True)

        journal = Journal(run_dir / names.JOURNAL)
        # One embedding service per run: every evaluator's texts share its cache and counters.
        services = RunServices(llm=llm, embeddings=EmbeddingService(device=config.device), memo=RunMemo(),
                               plugins=plugins, hosts=hosts, executor=executor)
        closing.callback(journal.close)
        closing.callback(_close_services, services)  # before the journal closes: they journal their counters
        closing.callback(record_cache_keys, llm, run_dir)  # before the cache closes (sonar pack reads it)
        closing.callback(executor.close)  # after the services: their counters come back from it first
        executor.start(run_id, journal, services)
        llm.attach(journal)
        if hosts is not None:
            hosts.attach(journal)
        state = RunState(config=config, run_id=run_id, run_dir=run_dir,
                         created=datetime.now(timezone.utc).isoformat(timespec="seconds"), started=started,
                         jobs=jobs, plugins=plugins, services=services, dataset=dataset,
                         dataset_summary=dataset.summary(), incompatible=incompatible,
                         result=ExecutionResult(run_dir=run_dir, status="running", exit_code=EXIT_OK), benchmark=benchmark,
                         ledger=ledger)
        closing.push(interrupt_guard(state, journal))  # Ctrl-C: run.json says interrupted, no call starts
        start = "starting calibration run" if benchmark is not None and benchmark.calibrating else "starting run"
        journal.event("resuming run" if previous else start, "Runner", "execute_run", run_id=run_id,
                      **start_fields(state), evaluators=[j.label for j in jobs], dataset=str(dataset_path))
        journal_plan(state, journal)
        note_trace_input(state, journal)
        journal.event("loaded plugins", "Runner", "execute_run", plugins=[p.name for p in plugins.plugins])
        for failure in plugins.failures:
            journal.event("plugin failed", "Runner", "execute_run", plugin=failure.name, stage=failure.stage,
                          error=failure.error)
        if hosts is not None:
            _ask_hosts(state, dataset_path, suite_fingerprint, journal, progress)
            if ledger.stopped:  # the items the budget refused failed; those answered are kept
                _stop_for_budget(state, journal, BudgetExceeded(ledger.stopped))
        journal.event("loaded dataset", "Runner", "execute_run", rows=len(state.dataset),
                      models=state.dataset.models, fingerprint=state.dataset.fingerprint)
        journal_items(state, journal)
        if state.dataset.cleaned:  # docs/reliability.md: text no UTF-8 file can hold, counted per field
            journal.event("cleaned text", "Runner", "execute_run", fields=dict(state.dataset.cleaned))
        write_run_json(state, status="running")

        try:
            calibrate_judges(state, journal)  # every judge measured before its verdicts are scored
            if ledger.stopped:
                raise BudgetExceeded(ledger.stopped)
            _run_jobs(state, journal, progress)
            write_trace_annotations(state, journal)
        except KeyboardInterrupt:
            journal.event("run interrupted", "Runner", "execute_run", finished=len(state.summaries))
            raise RunInterrupted(run_dir) from None
        except BudgetExceeded as exc:
            _stop_for_budget(state, journal, exc)
        record_cache_keys(llm, run_dir)
        _close_services(services)
        # The rows are no longer needed once index.html's drill-down is taken from them (run.json and index.html
        # use the dataset summary): let them go before every evaluator's problems are read back.
        prepare_index(state)
        state.dataset = dataset = None

        conclude_benchmark(state, journal)  # hazard and benchmark grades, from the finished evaluator folders
        conclude_redteam(state, journal)  # attack success rates, problems, insights and redteam/ (docs/redteam.md)
        _journal_service_counters(services, journal)
        _conclude(state)
        write_run_json(state, status=state.result.status)
        write_index(state)
        journal.event("finished run", "Runner", "execute_run", status=state.result.status,
                      exit_code=state.result.exit_code, seconds=round(time.time() - started, 3))
    state.result.costs = {**ledger.estimate_record(), **dry_run_outcomes(state)} if dry else ledger.record()
    return state.result


def _stop_for_budget(state: RunState, journal: Journal, exc: BudgetExceeded) -> None:
    """The budget stopped the run: run.json says so, and the error names the command that finishes it."""
    message = (f"{exc}; finished work is kept: continue with `sonar run --resume {state.run_dir} --max-cost "
               f"<higher>`")
    journal.event("run stopped by budget", "Runner", "execute_run", reason=str(exc),
                  finished=len(state.summaries))
    state.result.message = message
    write_run_json(state, status="stopped_by_budget")
    raise BudgetExceeded(message) from None


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
                                    llm=state.services.llm, ask=state.services.executor.asker(hosts, journal))
    except KeyboardInterrupt:
        journal.event("run interrupted", "Runner", "execute_run", finished=0)
        raise RunInterrupted(state.run_dir) from None
    state.dataset = produced.dataset
    state.dataset_summary = produced.dataset.summary()
    state.pipeline = produced.summary()
    state.pipeline_finished = produced.finished_fields()
    state.core_problems = host_problems(produced.counts, produced.failed)
    if not produced.dataset.rows and produced.failed:
        first = produced.failed[0]
        state.unscored = (f"nothing could be scored: all {len(produced.failed)} item(s) failed; the first, test case "
                          f"{first['test_case_key']!r} on host {first['model_key']!r}: {first['error']}")
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
        write_run_dataset(state.dataset.rows, state.run_dir)  # the dataset fields of every evaluator's Parquet rows, once
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
            journal.event("queuing evaluator", "Runner", "execute_run", evaluator=job.label, job=job.job_id)
            scored = None  # the previous evaluator's rows and results must not outlive its folder
            try:
                label = job.cls.display_name if job.label == job.cls.id else job.label
                scored = score_job(job, state.dataset, state.services, journal, batch_size=config.batch_size,
                                   progress=lambda total: sink.task(label, total=total), logger=logger,
                                   judge_trust=state.judge_trust.get(job.label))
                # Before its done marker: a run killed later (SIGKILL closes nothing) still packs its answers.
                record_cache_keys(state.services.llm, state.run_dir)
                if state.ledger is not None and state.ledger.stopped:  # an evaluator that kept the error per row
                    raise BudgetExceeded(state.ledger.stopped)
                findings = derive_findings(scored, state.judge_trust.get(job.label), stats_settings(config))
                if config.strict and findings.fallbacks:
                    # Before the folder is written: a resumed run scores the evaluator again.
                    raise PluginError(f"evaluator '{job.label}' scored with a fallback model (--strict): "
                                      f"{findings.fallbacks[0]}")
                written = write_evaluator_dir(findings, job.folder, mark_done=False, csv_formula_escape=config.csv_formula_escape,
                                              columnar_only_above=config.columnar_only_above)
                summary = stored_summary(written, job.folder, findings.leaderboard)
            except (PluginError, BudgetExceeded, CacheUnreadable):
                raise  # --strict, the budget, or a cache no judge can use: the run stops here
            except Exception as exc:  # one evaluator's failure must not end the run
                if _is_output_fault(exc, state.run_dir):
                    raise  # ... but a folder that cannot be written ends it (OutputError; --resume continues)
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
                          skipped_rows=len(scored.skipped), problems=len(summary.problems),
                          metric=scored.primary.key, means={model: values[scored.primary.key]
                                                            for model, values in scored.aggregates().items()},
                          seconds=round(time.time() - job_started, 3))
            scored = findings = None
            journal.event("wrote artifacts", "Runner", "execute_run", evaluator=job.label, folder=job.folder.name)
            state.summaries.append(summary)
            state.executed.append({**entry, "status": "success", "error": "",
                                   "duration": round(time.time() - job_started, 3)})
            write_run_json(state, status="running")
            # Last: journalled and in run.json before the folder counts as finished. A run killed in between
            # scores it again on resume, rather than keeping a finished evaluator its records never saw finish.
            mark_finished(job.folder)
        journal.event("finished pipeline", "Runner", "execute_run", **state.pipeline_finished)


def _is_output_fault(exc: BaseException, run_dir: Path) -> bool:
    """Whether ``exc`` is a failed write into the run folder (not an evaluator's own error)."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return False
    try:
        return Path(exc.filename).resolve().is_relative_to(run_dir)
    except (TypeError, ValueError, OSError):
        return False


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
    result.problems, result.insights = run_items(state)
    result.executed = state.executed
    result.status = "failed" if result.failed or state.unscored else "success"
    if result.failed:
        result.exit_code = EXIT_EVALUATOR_FAILED
        result.message = f"{len(result.failed)} evaluator(s) failed: " + "; ".join(
            f"{f['evaluator']}: {f['error']}" for f in result.failed)
    if state.unscored:  # every item failed: a CI job must not pass on a run that scored nothing
        result.exit_code = EXIT_EVALUATOR_FAILED
        result.message = state.unscored
    if config.fail_on_problems:
        gating = gating_problems(result.problems, config.fail_on_problems)
        if gating and result.exit_code == EXIT_OK:
            result.exit_code = EXIT_PROBLEMS
            result.message = (f"{len(gating)} problem(s) at or above severity {config.fail_on_problems} "
                              f"(--fail-on-problems)")
