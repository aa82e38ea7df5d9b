"""Markdown artifacts: the leaderboard table and its cells.

Model names and texts come from datasets: every cell goes through :func:`md_cell`.
"""

from __future__ import annotations

import html
from typing import Any

from ..contract import MetricRole
from ..findings.scored import ScoredEvaluator

__all__ = ["leaderboard_markdown", "md_cell", "report_markdown"]


def _fmt(value: float | None, spec: str = ".4f") -> str:
    return "" if value is None else format(value, spec)


def md_cell(text: str) -> str:
    """Model names come from datasets: escape HTML (many markdown viewers render it) and
    the characters that would break the table."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def leaderboard_markdown(ev: ScoredEvaluator, board: dict[str, Any]) -> str:
    """Markdown table: Rank, LLM, (Pass, Fail,) metrics, Time, Cost."""
    primary = ev.primary
    boolean = board["kind"] == "bool"
    # Bool boards show the pass and fail counts; of the other 0/1 shares only those that say
    # something new (retrieval and parse failures), since fail and generation failure mirror pass.
    others = [m for m in ev.cls.metrics if m.key != primary.key
              and (not boolean or m.role in (MetricRole.RETRIEVAL_FAILURE, MetricRole.PARSE_FAILURE))]
    shown = [primary, *others]
    header = ["Rank", "LLM", *(["Pass", "Fail"] if boolean else []), *(m.display_name for m in shown),
              "Time (s)", "Cost (USD)"]
    lines = [f"# {ev.cls.display_name} leaderboard", "",
             "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in board["rows"]:
        counts = [str(row["counts"]["pass"]), str(row["counts"]["fail"])] if boolean else []
        cells = ["–" if row["rank"] is None else str(row["rank"]), md_cell(row["model"]), *counts, *(_fmt(row["metrics"][m.key]) for m in shown),
                 _fmt(row["total_time"], ".2f"), _fmt(row["total_cost"], ".4f")]
        lines.append("| " + " | ".join(cells) + " |")
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


def report_markdown(ev: ScoredEvaluator, board_md: str, problems: list[dict], insights: list[dict]) -> str:
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
