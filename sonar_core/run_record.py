"""The run-level record: run.json and index.html, rewritten as evaluators finish."""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import names
from .artifacts.formats import write_atomic, write_json
from .artifacts.html import render_index
from .config import RunConfig
from .dataset import LLMDataset
from .plugins import PluginHost
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


def problem_counts(problems: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for p in problems:
        counts[p["severity"]] = counts.get(p["severity"], 0) + 1
    return counts


def _render_index(base: dict[str, Any], result: RunResult, summaries: list[dict[str, Any]]) -> str:
    from . import __version__

    views = [s["view"] for s in summaries]
    best, counted = best_model(views)
    dataset: LLMDataset = base["dataset"]
    run = {
        "run_id": base["run_id"], "created": base["created"], "status": result.status,
        "dataset": dataset.summary(), "models": dataset.models, "best_model": best, "ranked_evaluators": counted,
        "failed": result.failed, "skipped": result.skipped, "problem_counts": problem_counts(result.problems),
        "sonar_version": __version__,
    }
    return render_index(run, views)


def write_run_json(run_dir: Path, base: dict[str, Any], executed: list[dict[str, Any]], result: RunResult,
                    summaries: list[dict[str, Any]], status: str) -> None:
    config: RunConfig = base["config"]
    dataset: LLMDataset = base["dataset"]
    jobs: list[Job] = base["jobs"]
    problems = [p for s in summaries for p in s["problems"]]
    best, _ = best_model([s["view"] for s in summaries])
    counts = problem_counts(problems)
    fragments = base.get("fragments")
    if fragments is not None:
        for summary in summaries:  # a resumed evaluator's summary was read back from its folder
            fragments.keep(*summary["problems"], *summary["insights"])
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
        "plugin_failures": [{"plugin": f.name, "stage": f.stage, "error": f.error} for f in base["host"].failures],
        "result": {
            "dataset": dataset.summary(),
            "models": dataset.models,
            "all_explainer_ids": sorted(base["host"].evaluators),
            "incompatible_explainer_ids": [s["evaluator"] for s in result.skipped],
            "incompatible_explainers": result.skipped,
            "scheduled_explainers": [j.label for j in jobs],
            "explainers_parameters": {j.label: j.params for j in jobs},
            "explainers_thresholds": {j.label: j.thresholds for j in jobs},
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
    }, fragments)


def write_index(run_dir: Path, base: dict[str, Any], result: "RunResult", summaries: list[dict[str, Any]]) -> None:
    write_atomic(run_dir / names.INDEX_HTML, _render_index(base, result, summaries).encode("utf-8"))
