"""A finished evaluator's summary as the run keeps it: its typed leaderboard, problems and insights.

Problems list at most 1,000 rows each (:mod:`sonar_core.findings.row_keys`), so a run keeps every
finished evaluator's problems and insights in memory (a few MB at 1,000,000 rows x 5 evaluators) and
run.json writes them as it writes any list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .. import names
from ..findings.types import EvaluatorSummary, Leaderboard, LeaderboardRow, MetricRule
from .views import EvaluatorSummaryJson, EvaluatorView

__all__ = ["stored_summary", "stored_leaderboard", "items_value", "severities", "load_summary"]


def stored_summary(summary: EvaluatorSummaryJson, folder: Path,
                   leaderboard: Leaderboard | None = None) -> EvaluatorSummary:
    """``summary`` (an evaluator's, as written to ``folder``) as the run keeps it.

    ``leaderboard``: the findings' own (a fresh evaluator); None for a finished folder a resumed run
    keeps, whose leaderboard is read back from what the summary stored (:func:`stored_leaderboard`).
    """
    view = dict(summary["view"])
    return EvaluatorSummary(label=view["label"], leaderboard=leaderboard or stored_leaderboard(view),
                            fallbacks=tuple(view.get("fallbacks", ())), problems=summary["problems"],
                            insights=summary["insights"], view=view, test_cases=summary.get("test_cases"),
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


def items_value(lists: list) -> list:
    """The concatenation of ``lists`` (run.json's problems or insights)."""
    return [item for items in lists for item in items]


def severities(summaries: Sequence[EvaluatorSummary]) -> list[str]:
    """The severities of every summary's problems."""
    return [p["severity"] for s in summaries for p in s.problems]


def load_summary(folder: Path) -> EvaluatorSummaryJson | None:
    """A finished evaluator folder's evaluator_summary.json, or None when it cannot be read."""
    try:
        return json.loads((folder / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
