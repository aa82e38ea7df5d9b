"""Markdown artifacts: the leaderboard table and its cells.

Model names and texts come from datasets: every cell goes through :func:`md_cell`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..contract import MetricRole
from ..findings.wording import p_text
from .record_shapes import BoardJson, IntervalJson, PairJson

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.scored import ScoredEvaluator

__all__ = ["leaderboard_markdown", "md_cell", "report_markdown"]


def _fmt(value: float | None, spec: str = ".4f") -> str:
    return "" if value is None else format(value, spec)


def _interval(entry: IntervalJson | None) -> str:
    """`` [low, high]`` after a value, or nothing where there is no interval."""
    if not entry or entry.get("ci_low") is None:
        return ""
    return f" [{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]"


def _versus(entry: PairJson | None) -> str:
    """How a model stands against the leader: ``tie (p = 0.21)``, ``behind (p = 0.003)``; empty for the leader."""
    if entry is None:
        return ""
    if entry["n"] == 0:
        return "no shared test case"
    return f"{'behind' if entry['significant'] else 'tie'} ({p_text(entry['p_adjusted'])})"


def md_cell(text: str) -> str:
    """Model names come from datasets: escape HTML (many markdown viewers render it) and
    the characters that would break the table."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def leaderboard_markdown(ev: "ScoredEvaluator", board: BoardJson) -> str:
    """Markdown table: Rank, LLM, (Pass, Fail,) metrics, Time, Cost."""
    primary = ev.primary
    boolean = board["kind"] == "bool"
    # Bool boards show the pass and fail counts; of the other 0/1 shares only those that say
    # something new (retrieval and parse failures), since fail and generation failure mirror pass.
    others = [m for m in ev.cls.metrics if m.key != primary.key
              and (not boolean or m.role in (MetricRole.RETRIEVAL_FAILURE, MetricRole.PARSE_FAILURE))]
    shown = [primary, *others]
    # With intervals (findings.confidence), each value is followed by its interval and a column
    # says how each model stands against the leader in the paired test.
    tests = {entry["model_b"]: entry for entry in board.get("pairwise", [])
             if board["ranking"] and entry["model_a"] == board["ranking"][0]}
    header = ["Rank", "LLM", *(["Pass", "Fail"] if boolean else []), *(m.display_name for m in shown),
              *(["Vs. best"] if "pairwise" in board else []), "Time (s)", "Cost (USD)"]
    lines = [f"# {ev.cls.display_name} leaderboard", "",
             "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in board["rows"]:
        counts = [str(row["counts"]["pass"]), str(row["counts"]["fail"])] if boolean else []
        values = [_fmt(row["metrics"][m.key]) + _interval(row.get("intervals", {}).get(m.key)) for m in shown]
        versus = [_versus(tests.get(row["model"]))] if "pairwise" in board else []
        cells = ["–" if row["rank"] is None else str(row["rank"]), md_cell(row["model"]), *counts, *values, *versus,
                 _fmt(row["total_time"], ".2f"), _fmt(row["total_cost"], ".4f")]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if "confidence_level" in board:
        lines.append(f"Values are means with their {board['confidence_level']:.0%} interval in brackets "
                     f"(Wilson for pass rates, bootstrap over test cases for scores).")
        ties = [row["model"] for row in board["rows"] if row.get("tied_with_best")]
        if ties:
            lines.append(f"Not significantly different from {md_cell(board['ranking'][0])} "
                         f"(paired test, Holm-adjusted): {', '.join(md_cell(m) for m in ties)}.")
        lines.append("")
    trust = board.get("judge_trust")
    if trust and trust["status"] == "untrusted":
        # The values stay for the record; a ranking would claim what the judge has not earned.
        lines.append(f"Untrusted judge: models are not ranked. {md_cell(trust['summary'])}")
        return "\n".join(lines) + "\n"
    direction = "higher" if primary.higher_is_better else "lower"
    lines.append(f"Ranked by {primary.display_name} ({direction} is better, threshold {ev.thresholds[primary.key]:g}).")
    if trust:
        lines.append("")
        lines.append(md_cell(trust["summary"]))
    return "\n".join(lines) + "\n"


def report_markdown(ev: "ScoredEvaluator", board_md: str, problems: list[dict], insights: list[dict]) -> str:
    """work/report.md: title, description, notes, leaderboard, problems, insights and tables."""
    # Problem texts, model names and table cells come from datasets: md_cell escapes HTML.
    lines = [f"# {ev.cls.display_name}", "", ev.cls.description, ""]
    lines += [f"> {md_cell(note)}" for note in ev.notes] + ([""] if ev.notes else [])
    lines += [board_md, "## Problems", ""]
    lines += [f"- **{p['severity']}** {md_cell(p['description'])}" for p in problems] or ["No problems."]
    lines += ["", "## Insights", ""]
    lines += [f"- *{i['insight_type']}*: {md_cell(i['description'])}" for i in insights] or ["No insights."]
    for table in ev.tables:
        lines += ["", f"## {md_cell(table.title)}", "", "| " + " | ".join(md_cell(c) for c in table.columns) + " |",
                  "|" + "|".join("---" for _ in table.columns) + "|"]
        lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"
