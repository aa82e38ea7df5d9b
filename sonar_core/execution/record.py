"""The run-level record made from the run's state: run.json, and index.html with its case pages.

run.json is rewritten as the run goes (when it starts, after each evaluator, at the end);
index.html once, at the end. Both are made from :class:`~.state.RunState` alone.
"""

from __future__ import annotations

import platform
import time

from .. import names
from ..artifacts.drilldown import build_casebook, redact_views, write_casebook
from ..artifacts.formats import write_atomic
from ..artifacts.benchmark_dir import benchmark_json, benchmark_view
from ..artifacts.costs_md import costs_markdown, costs_summary
from ..artifacts.html import render_index, tradeoff_view
from ..artifacts.run_json import OverallResult, RunOutcome, RunRecord, write_run_record
from ..artifacts.items import insight_json, problem_json
from ..artifacts.record_shapes import InsightJson, PipelineJson, ProblemJson, VersionsJson
from ..artifacts.views import ConcurrencyView, RunView
from ..artifacts.stored import items_value
from ..artifacts.stored import severities as stored_severities
from ..config import EXECUTION_KEYS
from ..contract import finite_or_none
from ..config import RunConfig
from ..findings import StatsSettings, model_stats
from ..findings.case_rows import selected_case_keys
from ..findings.case_verdicts import case_fails
from ..findings.lead import lead_problems
from ..findings.run_findings import problem_counts, run_findings
from ..findings.types import RunFindings
from ..hosts.registry import summary as host_summary
from ..jsontypes import JsonObject
from .state import RunState

__all__ = ["run_items", "run_record", "write_run_json", "prepare_index", "write_index", "stats_settings", "concurrency_ranges",
           "host_calls"]


def stats_settings(config: RunConfig) -> StatsSettings:
    """The run's interval and test settings, from its configuration (the seed is fixed)."""
    return StatsSettings(confidence=config.confidence_level, resamples=config.bootstrap_resamples,
                         epoch_reducer=config.epoch_reducer, epochs=config.epochs)


def _findings(state: RunState, with_tradeoff: bool = False) -> RunFindings:
    """What the run concludes over its finished evaluators' leaderboards and every problem; the
    trade-off only once the models' speed and cost were taken from the rows (index.html)."""
    severities = [p.severity for p in state.core_problems] + stored_severities(state.summaries)
    return run_findings([s.leaderboard for s in state.summaries], state.dataset_summary["models"], severities,
                        state.model_stats if with_tradeoff else None)


def _versions(state: RunState) -> VersionsJson:
    from ..version import __version__

    return {"sonar": __version__, "python": platform.python_version(),
            "plugins": {p.name: p.version for p in state.plugins.plugins}}


def _epoch_keys(config: RunConfig) -> set[str]:
    """The epoch settings left out of run.json: both while they are the defaults (a run of one epoch
    records what it recorded before epochs existed)."""
    unused = {"epochs", "epoch_reducer"} if config.epochs == 1 and config.epoch_reducer == "mean" else set()
    return unused | ({"traces"} if config.traces is None else set())  # likewise a run without traces (docs/traces.md)


def run_record(state: RunState, status: str) -> RunRecord:
    """run.json's content for the run as it stands."""
    config, result, jobs = state.config, state.result, state.jobs
    dataset = state.dataset_summary
    core = [problem_json(p) for p in state.core_problems]  # problems the core found itself (failing hosts)
    problem_lists = ([core] if core else []) + [s.problems for s in state.summaries]
    concluded = _findings(state)
    counts = concluded.severity_counts
    services = state.services
    pipeline = ({**state.pipeline, "host_settings": host_summary(services.hosts)}
                if state.pipeline is not None and services.hosts is not None else None)
    return RunRecord(
        run_id=state.run_id,
        created=state.created,
        status=status,
        progress=1.0 if status in ("success", "failed") else state.progress,  # a stopped run is not done
        error=result.message,
        interpretation_parameters=config.model_dump(mode="json", exclude=set(EXECUTION_KEYS) | _epoch_keys(config)),
        explainers=[j.label for j in jobs],
        versions=_versions(state),
        timings={"seconds": round(time.time() - state.started, 3)},
        services={"embeddings": services.embeddings.describe()},
        plugin_failures=[{"plugin": f.name, "stage": f.stage, "error": f.error} for f in state.plugins.failures],
        llm=services.llm.summary(),
        judge_calibration=state.judge_calibration,
        statistics=stats_settings(config).as_dict(),
        pipeline=pipeline,
        fallbacks={s.label: list(s.fallbacks) for s in state.summaries if s.fallbacks} or None,
        benchmark=(benchmark_json(state.benchmark_findings) if state.benchmark_findings is not None else None),
        redteam=state.redteam_record,
        costs=state.ledger.record() if state.ledger is not None and not state.ledger.dry else None,
        result=RunOutcome(
            dataset=dataset,
            models=dataset["models"],
            all_explainer_ids=sorted(state.plugins.evaluators),
            incompatible_explainer_ids=[s["evaluator"] for s in result.skipped],
            incompatible_explainers=result.skipped,
            scheduled_explainers=[j.label for j in jobs],
            explainers_parameters={j.label: j.params for j in jobs},
            explainers_thresholds={j.label: {k: finite_or_none(v) for k, v in j.thresholds.items()} for j in jobs},
            executed_explainers=state.executed,
            problems=items_value(problem_lists),
            insights=items_value([s.insights for s in state.summaries] + _core_insights(state)),
            overall_result=OverallResult(
                high_severity_problems=counts["HIGH"],
                medium_severity_problems=counts["MEDIUM"],
                low_severity_problems=counts["LOW"],
                best_model=concluded.best.model,
                failed_explainers=[f["evaluator"] for f in result.failed],
            ),
        ),
    )


def run_items(state: RunState) -> tuple[list[ProblemJson], list[InsightJson]]:
    """Every problem of the run (the core's own first) and every insight, as their files hold them."""
    return ([problem_json(p) for p in state.core_problems] + [p for s in state.summaries for p in s.problems],
            [i for s in state.summaries for i in s.insights] + [i for items in _core_insights(state) for i in items])


def _core_insights(state: RunState) -> list[list[InsightJson]]:
    """The core's own insights (a red-team run's), as one more list; none in any other run."""
    return [[insight_json(i) for i in state.core_insights]] if state.core_insights else []


def write_run_json(state: RunState, status: str) -> None:
    write_run_record(state.run_dir, run_record(state, status))


def prepare_index(state: RunState) -> None:
    """Take from the dataset rows what index.html needs (the drill-down, model speed and cost).

    Called once every evaluator is done and before the runner lets the rows go: the casebook
    holds only the drill-down's test cases (at most ``CASE_LIMIT``), so it is small.
    """
    rows = state.dataset.rows
    state.casebook = build_casebook(rows, state.summaries, [case_fails(s) for s in state.summaries],
                                    selected_case_keys(row.test_case_key for row in rows))
    state.model_stats = model_stats(rows)


def _run_view(state: RunState) -> RunView:
    from ..version import __version__

    result = state.result
    best = _findings(state).best
    dataset = state.dataset_summary
    costs = state.ledger.record() if state.ledger is not None and not state.ledger.dry else None
    return {
        "run_id": state.run_id, "created": state.created, "status": result.status,
        "dataset": dataset, "models": dataset["models"], "best_model": best.model,
        "ranked_evaluators": best.counted,
        "best_card": {"title": best.title, "model": best.named, "note": best.note},
        "failed": result.failed, "skipped": result.skipped, "problem_counts": problem_counts(result.problems),
        "sonar_version": __version__,
        "pipeline": state.pipeline, "core_problems": [problem_json(p) for p in state.core_problems],
        "host_calls": host_calls(state.pipeline, host_summary(state.services.hosts))
        if state.pipeline is not None and state.services.hosts is not None else {},
        "concurrency": concurrency_ranges(state),
        "costs": costs, "costs_line": costs_summary(costs) if costs else None,
        "redteam_report": (state.redteam_record or {}).get("report"),
    }


def host_calls(pipeline: PipelineJson, hosts: dict[str, JsonObject]) -> dict[str, dict[str, int]]:
    """Per host, the calls of this process beyond the test suite's: what evaluators asked it (a
    robustness evaluator's perturbed questions and baseline samples), ``evaluators_fetched`` and
    ``evaluators_cached``. The costs table counts a host's calls in all (the test suite's and the
    evaluators'), so a report shows both, and says so."""
    out = {}
    for key, counts in pipeline.get("hosts", {}).items():
        stats = hosts.get(key, {})
        if "fetched" not in stats:
            continue
        out[key] = {"evaluators_fetched": max(0, stats["fetched"] - counts["fetched"]),
                    "evaluators_cached": max(0, stats.get("cached", 0) - counts["cached"])}
    return out


def concurrency_ranges(state: RunState) -> list[ConcurrencyView]:
    """Each judge and host whose adaptive in-flight limit moved: the range it used and its ceiling
    (index.html; run.json holds the same as ``concurrency_limit`` beside the client's counters)."""
    services = state.services
    judges = services.llm.summary()["used"]
    hosts = host_summary(services.hosts) if services.hosts is not None else {}
    out: list[ConcurrencyView] = []
    for role, entries, settings in (("judge", judges, "config"), ("model under test", hosts, "settings")):
        for key, entry in entries.items():
            if entry.get("concurrency_limit"):
                out.append({"key": key, "role": role, **entry["concurrency_limit"],
                            "ceiling": entry.get(settings, {}).get("max_concurrency")})
    return out


def write_index(state: RunState) -> None:
    """index.html, with the test-case drill-down pages it links to (written first)."""
    book = state.casebook  # prepare_index took it from the rows
    run = _run_view(state)
    views = [s.view for s in state.summaries]
    if book.cases:
        write_casebook(state.run_dir, book, run)
    tradeoff = tradeoff_view(_findings(state, with_tradeoff=True).tradeoff)
    shown = redact_views(views, book.hidden_texts)
    grades = benchmark_view(state.benchmark_findings, book.links)
    if run["costs"]:
        write_atomic(state.run_dir / names.COSTS_MD, costs_markdown(run["costs"]).encode("utf-8"))
    lead = lead_problems([p["severity"] for p in run.get("core_problems") or ()],
                         [[p["severity"] for p in view["problems"]] for view in shown])
    write_atomic(state.run_dir / names.INDEX_HTML,
                 render_index(run, shown, lead, book, tradeoff, grades).encode("utf-8"))
