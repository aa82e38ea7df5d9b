"""The run-level record: run.json and index.html, rewritten as evaluators finish."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import names
from .artifacts.formats import write_atomic, write_json
from .aggregate import model_stats
from .artifacts.html import render_index, tradeoff_view
from .artifacts.drilldown import build_casebook, redact_views, write_casebook
from .artifacts.jsontext import ListFiles
from .config import RunConfig
from .contract import finite_or_none
from .plugins import PluginManager
from .hosts.registry import summary as host_summary
from .problems import SEVERITIES

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Job, RunResult

__all__ = ["write_run_json", "write_index", "prepare_index", "problem_counts", "best_model", "StoredList", "stored_summary"]


class StoredList(Sequence):
    """A finished evaluator's problems or insights: the list in its JSON file, read when first used.

    run.json repeats every finished evaluator's problems, and with a large dataset they name
    hundreds of thousands of failing rows. Rather than hold them all until the run ends, the
    run keeps each file's path (run.json copies the file's text, see jsontext.ListFiles), the
    length and the severities; the items are read back only when something iterates them.
    """

    def __init__(self, path: Path, items: list[dict[str, Any]]) -> None:
        self.path = path
        self._length = len(items)
        self.severities = [item.get("severity") for item in items]
        self._items: list[dict[str, Any]] | None = None

    def _load(self) -> list[dict[str, Any]]:
        if self._items is None:
            self._items = _load_sharing_row_keys(self.path.read_text(encoding="utf-8"))
        return self._items

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        return self._load()[index]

    def __iter__(self):
        return iter(self._load())


def _load_sharing_row_keys(text: str) -> list[Any]:
    """``json.loads(text)``, with the test case and model keys of each problem's row lists made
    one string per distinct key.

    A problem names its failing rows twice (``dataset_row_keys`` pairs and ``test_case_keys``)
    and the JSON reader makes a new string for every occurrence: with many failing rows those
    copies were most of the memory the read-back problems took. Sharing happens as each
    object is completed, so the copies of only one problem exist at a time.
    """
    shared: dict[str, str] = {}

    def share(obj: dict[str, Any]) -> dict[str, Any]:
        keys = obj.get("test_case_keys")
        if isinstance(keys, list):
            obj["test_case_keys"] = [shared.setdefault(k, k) if type(k) is str else k for k in keys]
        pairs = obj.get("dataset_row_keys")
        if isinstance(pairs, list):
            for pair in pairs:
                if isinstance(pair, list):
                    pair[:] = [shared.setdefault(k, k) if type(k) is str else k for k in pair]
        return obj

    return json.JSONDecoder(object_hook=share).decode(text)


def stored_summary(summary: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``summary`` (an evaluator's, as written to its folder) with its problems and insights
    replaced by :class:`StoredList` views of the folder's files, in the view as well."""
    stored = dict(summary)
    view = stored["view"] = dict(summary["view"])
    for key, path in (("problems", folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE),
                      ("insights", folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE)):
        items = summary[key]
        stored[key] = StoredList(path, items)
        if view.get(key) is items or view.get(key) == items:
            view[key] = stored[key]
    return stored


def _items_value(lists: list) -> Any:
    """The concatenation of ``lists`` for run.json: copied from their files when all are stored."""
    if all(isinstance(items, StoredList) for items in lists):
        return ListFiles([items.path for items in lists])
    return [item for items in lists for item in items]


def _severities(summaries: list[dict[str, Any]]) -> list[str]:
    return [severity for s in summaries for severity in
            (s["problems"].severities if isinstance(s["problems"], StoredList) else (p["severity"] for p in s["problems"]))]


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


def _versions(plugins: PluginManager) -> dict[str, Any]:
    from . import __version__

    return {"sonar": __version__, "python": platform.python_version(),
            "plugins": {p.name: p.version for p in plugins.plugins}}


def _services(base: dict[str, Any]) -> dict[str, Any]:
    """What the run's shared services did: texts embedded and cached, models loaded."""
    embeddings = base.get("embeddings")
    if embeddings is None:
        return {}
    return {"embeddings": embeddings.describe()}


def problem_counts(problems: list[dict[str, Any]]) -> dict[str, int]:
    return _count_severities(p["severity"] for p in problems)


def _count_severities(severities) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1
    return counts


def _dataset_summary(base: dict[str, Any]) -> dict[str, Any]:
    # Taken once at the start: the runner lets go of the rows when the last evaluator is done.
    if "dataset_summary" not in base:
        base["dataset_summary"] = base["dataset"].summary()
    return base["dataset_summary"]


def _run_view(base: dict[str, Any], result: RunResult, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    from . import __version__

    views = [s["view"] for s in summaries]
    best, counted = best_model(views)
    dataset = _dataset_summary(base)
    run = {
        "run_id": base["run_id"], "created": base["created"], "status": result.status,
        "dataset": dataset, "models": dataset["models"], "best_model": best, "ranked_evaluators": counted,
        "failed": result.failed, "skipped": result.skipped, "problem_counts": problem_counts(result.problems),
        "sonar_version": __version__,
        "pipeline": base.get("pipeline"), "core_problems": base.get("core_problems", []),
    }
    return run


def write_run_json(run_dir: Path, base: dict[str, Any], executed: list[dict[str, Any]], result: RunResult,
                    summaries: list[dict[str, Any]], status: str) -> None:
    config: RunConfig = base["config"]
    dataset = _dataset_summary(base)
    jobs: list[Job] = base["jobs"]
    core = base.get("core_problems") or []  # problems the core found itself (failing hosts)
    problem_lists = ([core] if core else []) + [s["problems"] for s in summaries]
    best, _ = best_model([s["view"] for s in summaries])
    counts = _count_severities([p["severity"] for p in core] + _severities(summaries))
    write_json(run_dir / names.RUN_JSON, {
        "schema_version": names.SCHEMA_VERSION,
        "run_id": base["run_id"],
        "created": base["created"],
        "status": status,
        "progress": 1.0 if status != "running" else round(len(executed) / max(len(jobs), 1), 4),
        "error": result.message,
        "interpretation_parameters": config.model_dump(mode="json"),
        "explainers": [j.label for j in jobs],
        "versions": _versions(base["plugins"]),
        "timings": {"seconds": round(time.time() - base["started"], 3)},
        "services": _services(base),
        "plugin_failures": [{"plugin": f.name, "stage": f.stage, "error": f.error} for f in base["plugins"].failures],
        # Judges: configuration keys, endpoints and models, never a key's value; cache location and counters.
        "llm": base["llm"].summary() if base.get("llm") is not None else None,
        # The models under test and what the pipeline asked them (runs with a test suite only).
        **({"pipeline": {**base["pipeline"], "host_settings": host_summary(base["hosts"])}}
           if base.get("pipeline") is not None and base.get("hosts") is not None else {}),
        "result": {
            "dataset": dataset,
            "models": dataset["models"],
            "all_explainer_ids": sorted(base["plugins"].evaluators),
            "incompatible_explainer_ids": [s["evaluator"] for s in result.skipped],
            "incompatible_explainers": result.skipped,
            "scheduled_explainers": [j.label for j in jobs],
            "explainers_parameters": {j.label: j.params for j in jobs},
            "explainers_thresholds": {j.label: {k: finite_or_none(v) for k, v in j.thresholds.items()} for j in jobs},
            "executed_explainers": executed,
            "problems": _items_value(problem_lists),
            "insights": _items_value([s["insights"] for s in summaries]),
            "overall_result": {
                "high_severity_problems": counts["HIGH"],
                "medium_severity_problems": counts["MEDIUM"],
                "low_severity_problems": counts["LOW"],
                "best_model": best,
                "failed_explainers": [f["evaluator"] for f in result.failed],
            },
        },
    })


def prepare_index(base: dict[str, Any], summaries: list[dict[str, Any]]) -> None:
    """Take from the dataset rows what index.html needs (the drill-down, model speed and cost).

    Called once every evaluator is done and before the runner lets the rows go: the casebook
    holds only the drill-down's test cases (at most ``CASE_LIMIT``), so it is small.
    """
    rows = base["dataset"].rows
    base["casebook"] = build_casebook(rows, summaries)
    base["model_stats"] = model_stats(rows)


def write_index(run_dir: Path, base: dict[str, Any], result: "RunResult", summaries: list[dict[str, Any]]) -> None:
    """index.html, with the test-case drill-down pages it links to (written first)."""
    book = base["casebook"]  # prepare_index took it from the rows
    run = _run_view(base, result, summaries)
    views = [s["view"] for s in summaries]
    if book.cases:
        write_casebook(run_dir, book, run)
    tradeoff = tradeoff_view(views, base["model_stats"])
    shown = redact_views(views, book.hidden_texts)
    write_atomic(run_dir / names.INDEX_HTML, render_index(run, shown, book, tradeoff).encode("utf-8"))
