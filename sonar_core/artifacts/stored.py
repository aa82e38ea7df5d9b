"""A finished evaluator's problems and insights, kept as their files rather than in memory.

run.json repeats every finished evaluator's problems, and with a large dataset they name
hundreds of thousands of failing rows. The run keeps each file's path instead, and run.json
copies the file's text (:class:`~.jsontext.ListFiles`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import names
from ..findings.types import EvaluatorSummary, Leaderboard, LeaderboardRow, MetricRule
from ..jsontypes import JsonObject
from .jsontext import ListFiles
from .record_shapes import InsightJson, ProblemJson
from .views import EvaluatorSummaryJson, EvaluatorView

__all__ = ["StoredList", "stored_summary", "stored_leaderboard", "items_value", "severities", "load_summary"]


class StoredList(Sequence):
    """A finished evaluator's problems or insights: the list in its JSON file, read when first used.

    run.json repeats every finished evaluator's problems, and with a large dataset they name
    hundreds of thousands of failing rows. Rather than hold them all until the run ends, the
    run keeps each file's path (run.json copies the file's text, see jsontext.ListFiles), the
    length and the severities; the items are read back only when something iterates them.
    """

    def __init__(self, path: Path, items: list[ProblemJson] | list[InsightJson]) -> None:
        self.path = path
        self._length = len(items)
        self.severities = [item.get("severity") for item in items]
        self._items: list[ProblemJson] | list[InsightJson] | None = None

    def _load(self) -> list[ProblemJson] | list[InsightJson]:
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

    def share(obj: JsonObject) -> JsonObject:
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


def stored_summary(summary: EvaluatorSummaryJson, folder: Path,
                   leaderboard: Leaderboard | None = None) -> EvaluatorSummary:
    """``summary`` (an evaluator's, as written to its folder) as the run keeps it: its problems and
    insights replaced by :class:`StoredList` views of the folder's files, in the view as well.

    ``leaderboard``: the findings' own (a fresh evaluator); None for a finished folder a resumed run
    keeps, whose leaderboard is read back from what the summary stored (:func:`stored_leaderboard`).
    """
    view = dict(summary["view"])
    lists = {}
    for key, path in (("problems", folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE),
                      ("insights", folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE)):
        items = summary[key]
        lists[key] = StoredList(path, items)
        if view.get(key) is items or view.get(key) == items:
            view[key] = lists[key]
    return EvaluatorSummary(label=view["label"], leaderboard=leaderboard or stored_leaderboard(view),
                            fallbacks=tuple(view.get("fallbacks", ())), problems=lists["problems"],
                            insights=lists["insights"], view=view, test_cases=summary.get("test_cases"),
                            metrics=tuple(MetricRule(m["key"], bool(m["higher_is_better"]), m["threshold"])
                                          for m in view["metrics"]))


def stored_leaderboard(view: EvaluatorView) -> Leaderboard:
    """The typed leaderboard an evaluator's stored view holds: every figure is read, none derived."""
    board, primary = view["board"], next(m for m in view["metrics"] if m["is_primary"])
    passes = view.get("primary_pass_counts", {})
    rows = []
    for row in board["rows"]:
        model = row["model"]
        interval = (row.get("intervals") or {}).get(primary["key"]) or {}
        passed, checked = passes.get(model, (0, 0))
        rows.append(LeaderboardRow(model=model, rank=row["rank"], value=row["metrics"].get(primary["key"]),
                                   ci_low=interval.get("ci_low"), ci_high=interval.get("ci_high"), n=interval.get("n"),
                                   passed=passed, checked=checked, fails=primary["fails_by_model"].get(model, False)))
    rows += [LeaderboardRow(model=m, rank=None, value=None, passed=p, checked=c)
             for m, (p, c) in sorted(passes.items()) if m not in {r.model for r in rows}]
    return Leaderboard(primary_metric=primary["key"], ranking=tuple(board["ranking"]), rows=tuple(rows),
                       leader=view.get("leader"), untrusted=bool(view.get("untrusted")),
                       fails_by_metric={m["key"]: m["fails_by_model"] for m in view["metrics"]})


def items_value(lists: list) -> Any:
    """The concatenation of ``lists`` for run.json: copied from their files when all are stored."""
    if all(isinstance(items, StoredList) for items in lists):
        return ListFiles([items.path for items in lists])
    return [item for items in lists for item in items]


def severities(summaries: Sequence[EvaluatorSummary]) -> list[str]:
    """The severities of every summary's problems, without reading stored problems back."""
    return [severity for s in summaries for severity in
            (s.problems.severities if isinstance(s.problems, StoredList) else (p["severity"] for p in s.problems))]


def load_summary(folder: Path) -> EvaluatorSummaryJson | None:
    """A finished evaluator folder's evaluator_summary.json, or None when it cannot be read."""
    try:
        return json.loads((folder / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
