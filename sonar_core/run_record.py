"""The run-level record: run.json and index.html, rewritten as evaluators finish."""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import names
from .artifacts.formats import write_atomic, write_json
from .aggregate import model_stats
from .artifacts.html import render_index, tradeoff_view
from .artifacts.drilldown import build_casebook, redact_views, write_casebook
from .config import RunConfig
from .contract import finite_or_none
from .dataset import LLMDataset
from .plugins import PluginHost
from .hosts.registry import summary as host_summary
from .problems import SEVERITIES

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Job, RunResult

__all__ = ["write_run_json", "write_index", "problem_counts", "best_model"]


def best_model(views: list[dict[str, Any]]) -> tuple[str | None, int]:
    """The model with the lowest mean rank over evaluators that ranked more than one model."""
    ranks: dict[str, list[int]] = {}
    counted = 0
    for view in views:
        ranking = view["board"]["ranking"]
        if len(ranking) < 2:
            continue
        counted += 1
        for position, model in enumerate(ranking, start=1):
            ranks.setdefault(model, []).append(position)
    if not ranks:
        return None, 0
    return min(ranks, key=lambda m: (sum(ranks[m]) / len(ranks[m]), m)), counted


def _versions(host: PluginHost) -> dict[str, Any]:
    from . import __version__

    return {"sonar": __version__, "python": platform.python_version(),
            "plugins": {p.name: p.version for p in host.plugins}}


def _services(base: dict[str, Any]) -> dict[str, Any]:
    """What the run's shared services did: texts embedded and cached, models loaded."""
    embeddings = base.get("embeddings")
    if embeddings is None:
        return {}
    return {"embeddings": embeddings.describe()}


def problem_counts(problems: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for p in problems:
        counts[p["severity"]] = counts.get(p["severity"], 0) + 1
    return counts


def _run_view(base: dict[str, Any], result: RunResult, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    from . import __version__

    views = [s["view"] for s in summaries]
    best, counted = best_model(views)
    dataset: LLMDataset = base["dataset"]
    run = {
        "run_id": base["run_id"], "created": base["created"], "status": result.status,
        "dataset": dataset.summary(), "models": dataset.models, "best_model": best, "ranked_evaluators": counted,
        "failed": result.failed, "skipped": result.skipped, "problem_counts": problem_counts(result.problems),
        "sonar_version": __version__,
        "pipeline": base.get("pipeline"), "core_problems": base.get("core_problems", []),
    }
    return run


def write_run_json(run_dir: Path, base: dict[str, Any], executed: list[dict[str, Any]], result: RunResult,
                    summaries: list[dict[str, Any]], status: str) -> None:
    config: RunConfig = base["config"]
    dataset: LLMDataset = base["dataset"]
    jobs: list[Job] = base["jobs"]
    problems = base.get("core_problems", []) + [p for s in summaries for p in s["problems"]]
    best, _ = best_model([s["view"] for s in summaries])
    counts = problem_counts(problems)
    write_json(run_dir / names.RUN_JSON, {
        "schema_version": names.SCHEMA_VERSION,
        "run_id": base["run_id"],
        "created": base["created"],
        "status": status,
        "progress": 1.0 if status != "running" else round(len(executed) / max(len(jobs), 1), 4),
        "error": result.message,
        "interpretation_parameters": config.model_dump(mode="json"),
        "explainers": [j.label for j in jobs],
        "versions": _versions(base["host"]),
        "timings": {"seconds": round(time.time() - base["started"], 3)},
        "services": _services(base),
        "plugin_failures": [{"plugin": f.name, "stage": f.stage, "error": f.error} for f in base["host"].failures],
        # Judges: configuration keys, endpoints and models, never a key's value; cache location and counters.
        "llm": base["llm"].summary() if base.get("llm") is not None else None,
        # The models under test and what the pipeline asked them (runs with a test suite only).
        **({"pipeline": {**base["pipeline"], "host_settings": host_summary(base["hosts"])}}
           if base.get("pipeline") is not None and base.get("hosts") is not None else {}),
        "result": {
            "dataset": dataset.summary(),
            "models": dataset.models,
            "all_explainer_ids": sorted(base["host"].evaluators),
            "incompatible_explainer_ids": [s["evaluator"] for s in result.skipped],
            "incompatible_explainers": result.skipped,
            "scheduled_explainers": [j.label for j in jobs],
            "explainers_parameters": {j.label: j.params for j in jobs},
            "explainers_thresholds": {j.label: {k: finite_or_none(v) for k, v in j.thresholds.items()} for j in jobs},
            "executed_explainers": executed,
            "problems": problems,
            "insights": [i for s in summaries for i in s["insights"]],
            "overall_result": {
                "high_severity_problems": counts["HIGH"],
                "medium_severity_problems": counts["MEDIUM"],
                "low_severity_problems": counts["LOW"],
                "best_model": best,
                "failed_explainers": [f["evaluator"] for f in result.failed],
            },
        },
    })


def write_index(run_dir: Path, base: dict[str, Any], result: "RunResult", summaries: list[dict[str, Any]]) -> None:
    """index.html, with the test-case drill-down pages it links to (written first)."""
    dataset: LLMDataset = base["dataset"]
    run = _run_view(base, result, summaries)
    views = [s["view"] for s in summaries]
    book = build_casebook(dataset.rows, summaries)
    if book.cases:
        write_casebook(run_dir, book, run)
    tradeoff = tradeoff_view(views, model_stats(dataset.rows))
    shown = redact_views(views, book.hidden_texts)
    write_atomic(run_dir / names.INDEX_HTML, render_index(run, shown, book, tradeoff).encode("utf-8"))
