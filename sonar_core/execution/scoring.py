"""Scoring one job: its eligible rows through the evaluator, in batches, with the row cache.

Rows are chosen first (routing by category, perturbed copies, empty required inputs, a
``max_rows`` subset of whole test cases); rows an evaluator keeps (``caches_row_results``) come
from the row cache; the rest are scored in batches, each batch summarised in the journal. The
result is a :class:`~sonar_core.findings.ScoredEvaluator`: rows and values only; the findings
are derived from it afterwards.
"""

from __future__ import annotations

import logging
import math
from typing import Callable

from .. import names
from ..context import EvaluationContext
from ..contract import Input, RowResult, finite_or_none
from ..dataset import LLMDataset, Row
from ..findings import ScoredEvaluator, SkippedRow
from ..findings.judge_trust import NOT_SCORED, JudgeTrust, not_scored
from ..journal import Journal
from ..llm import LLMService
from ..llm.cache import CacheMissError
from .per_turn import PerTurn
from .executors import LOCAL
from .row_cache import RowResultCache, records_model_rows
from .shared_details import DetailsPool
from .state import Job, RunServices

__all__ = ["score_job", "eligible_rows", "whole_cases_subset", "judge_note", "job_logger", "not_scored_rows"]


def job_logger(job: Job) -> tuple[logging.Logger, logging.Handler]:
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


def eligible_rows(job: Job, dataset: LLMDataset, scored: ScoredEvaluator, journal: Journal) -> list[Row]:
    """The rows ``job`` scores, in dataset order; rows skipped for an empty required input go into
    ``scored.skipped``, and the report's notes say what was left out and why."""
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
    return eligible


def not_scored_rows(job: Job, eligible: list[Row], scored: ScoredEvaluator, trust: JudgeTrust,
                    journal: Journal, logger: logging.Logger) -> ScoredEvaluator:
    """The evaluator's eligible rows, none of them scored because its judge is untrusted: each row has no
    value, the reason as its message and in ``details[not_scored]``; nothing is asked of the judge."""
    reason = trust.not_scored_reason()
    empty = {m.key: None for m in job.cls.metrics}
    scored.scored.extend((row, RowResult(values=dict(empty), details={NOT_SCORED: reason}, error_message=reason))
                         for row in eligible)
    scored.notes.append(f"Not scored: judge {trust.judge} failed calibration (kappa {trust.kappa:.2f}, needs "
                        f"{trust.min_kappa:.2f}), so none of the {len(eligible)} eligible rows was scored and nothing "
                        "was asked of it; set score_untrusted: true (or --score-untrusted) to score them anyway.")
    journal.event("rows not scored", "Runner", "score_job", evaluator=job.label, rows=len(eligible),
                  judge=trust.judge, reason=reason)
    logger.info("%d rows not scored: %s", len(eligible), reason)
    return scored


def score_job(job: Job, dataset: LLMDataset, services: RunServices, journal: Journal, *, batch_size: int,
              progress: Callable[[int], Callable[[int], None]], logger: logging.Logger,
              judge_trust: JudgeTrust | None = None) -> ScoredEvaluator:
    """Run one evaluator over the dataset's eligible rows; problems of the data are recorded.

    ``progress(total)`` starts a progress bar of ``total`` rows and returns its advance function.
    The journal gets one ``measured batch quality`` line per batch; a run that asked model hosts
    (a ModelBench-style pipeline, whose rows are items the hosts answered) also gets ModelBench's
    ``measured item quality`` per item. ``judge_trust``: the job's judge's calibration; a judge that
    is not to score (untrusted, without ``score_untrusted``) scores nothing (:func:`not_scored_rows`).
    """
    scored = ScoredEvaluator(cls=job.cls, params=job.params, thresholds=job.thresholds, label=job.label)
    eligible = eligible_rows(job, dataset, scored, journal)
    llm, embeddings, hosts = services.llm, services.embeddings, services.hosts
    if job.cls.requires_judge:
        scored.notes.append(judge_note(job, llm))
    if not_scored(judge_trust):
        return not_scored_rows(job, eligible, scored, judge_trust, journal, logger)
    logger.info("scoring %d rows (%d skipped for empty required inputs)", len(eligible), len(scored.skipped))
    advance = progress(len(eligible))
    ctx = EvaluationContext(logger=logger, embeddings=embeddings,
                            device=embeddings.device_setting, llm=llm,
                            label=job.label, hosts=hosts, memo=services.memo,
                            plugins=services.plugins)
    evaluator = job.cls(job.params, ctx)
    if job.spec.per_turn:
        evaluator = PerTurn(evaluator)
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
    if to_score and row_cache is not None and row_cache.cache.cache_only and records_model_rows(job.cls):
        # Replaying a pack: these rows would need a model, and nothing may be computed afresh.
        raise CacheMissError(f"no cached answer for request: {len(to_score)} row(s) of evaluator '{job.label}' "
                             f"are not recorded in the pack (cache-only: no model may be loaded)")
    fresh: dict[int, RowResult] = {}
    pool = DetailsPool()
    # The executor scores the rows (here, or shards on a Ray cluster) and hands back batches in order.
    executor = services.executor or LOCAL
    for number, (start, batch, results, seconds, where) in enumerate(executor.batches(
            job, evaluator, [eligible[index] for index in to_score], size, services=services, journal=journal,
            logger=logger), start=1):
        indices = to_score[start:start + len(batch)]
        if len(results) != len(batch):
            raise RuntimeError(f"evaluator returned {len(results)} results for a batch of {len(batch)} rows")
        for index, result in zip(indices, results):
            result.details = pool.share(result.details)  # equal details held once (shared_details.py)
            fresh[index] = result
            if row_cache is not None:
                row_cache.put(keys[index], result)
        if hosts is not None:
            # Pipeline items: as many as the hosts answered, each worth its line (ModelBench's journal).
            share = round(seconds / max(len(batch), 1), 6)
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
                      seconds=round(seconds, 3), **where)
        advance(len(batch))
    # Dataset order, cached and fresh rows together.
    scored.scored.extend((row, cached[i] if i in cached else fresh[i]) for i, row in enumerate(eligible))
    scored.tables = list(evaluator.tables(scored.scored))
    scored.extra_problems = list(evaluator.extra_problems(scored.scored))
    scored.extra_insights = list(evaluator.extra_insights(scored.scored, dict(scored.thresholds)))
    return scored


def _row_cache(job: Job, llm: LLMService) -> RowResultCache | None:
    """The cache of the job's finished rows, for evaluators that keep them (``caches_row_results``), and the
    record of a local-model evaluator's rows (read back only when replaying a pack: see row_cache)."""
    # A per-turn result is not the row's whole-answer result: rows kept for reruns are whole answers only;
    # recorded model rows say in their key that they were scored turn by turn.
    keeps = getattr(job.cls, "caches_row_results", False) and not job.spec.per_turn
    if not keeps and not records_model_rows(job.cls):
        return None
    cache = llm.cache
    if cache is None:
        return None
    identity = None
    if job.cls.requires_judge:
        identity = llm.config(llm.judge_key(job.cls.judge_key(job.params))).identity()
    # Recorded rows are the run's own (the job id names the run): see RowResultCache's scope.
    return RowResultCache(cache, job.cls, job.params, identity, reads=keeps or cache.cache_only,
                          per_turn=job.spec.per_turn, scope=None if keeps else job.job_id)
