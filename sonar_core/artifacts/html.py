"""HTML rendering: each evaluator's fragment and the run's index.html.

Both are self-contained (inline CSS, no scripts, no external resources) so they open offline.
Templates render with Jinja2's autoescaping on: every string that came from a dataset, a
model or a judge is HTML-escaped; only Sonar's own stylesheet is marked safe.
"""

from __future__ import annotations

import heapq
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

from .. import names
from ..aggregate import ScoredEvaluator

__all__ = ["evaluator_view", "render_fragment", "render_index", "WORST_ROWS_LIMIT"]

#: How many failing rows a fragment lists.
WORST_ROWS_LIMIT = 25
#: Longest text a page shows for one answer or question, and for one message or table cell:
#: 25 weak rows of 1 MB answers must not make a 25 MB page. The full texts are in the results.
TEXT_LIMIT = 2000
CELL_LIMIT = 300


def clip(value: object, limit: int) -> str:
    """``value`` as text, cut at ``limit`` characters with a note of the full length."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters in all)"


#: Shown instead of an answer an evaluator with ``sensitive_outputs`` flagged.
WITHHELD = "(answer withheld from the report: it may contain what leaked; see Why)"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("sonar_core", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["format_number"] = lambda v, spec: format(v, spec)
    return env


@lru_cache(maxsize=1)
def _style() -> str:
    # The templates insert this with `|safe`: it is Sonar's own stylesheet, not data, and
    # autoescaping it would turn `"` and `>` into entities, which CSS does not decode inside
    # <style>, so the rules holding them (the body font, `details > summary`) would be dropped.
    return resources.files("sonar_core").joinpath("templates/_style.css").read_text(encoding="utf-8")


def evaluator_view(
    ev: ScoredEvaluator,
    board: dict[str, Any],
    problems: list[dict[str, Any]],
    insights: list[dict[str, Any]],
    dir_name: str,
) -> dict[str, Any]:
    """Everything the templates show about one evaluator (plain data, no runtime objects)."""
    aggregates = {row["model"]: row["metrics"] for row in board["rows"]}
    metrics = []
    for m in ev.cls.metrics:
        threshold = ev.thresholds[m.key]
        metrics.append({
            "key": m.key,
            "display_name": m.display_name,
            "description": m.description,
            "is_primary": m.key == ev.primary.key,
            "higher_is_better": m.higher_is_better,
            "threshold": threshold,
            "value_range": list(m.value_range),
            "fails_by_model": {model: m.fails(values.get(m.key), threshold) for model, values in aggregates.items()},
        })
    primary = next(m for m in metrics if m["is_primary"])
    # Choose the weakest rows first, then format only those few.
    sign = 1 if ev.primary.higher_is_better else -1
    failing = heapq.nsmallest(
        WORST_ROWS_LIMIT,
        ((result.values[ev.primary.key], row, result) for row, result in ev.failing(ev.primary)),
        key=lambda item: (sign * item[0], item[1].test_case_key, item[1].model_key),
    )
    worst = []
    for score, row, result in failing:
        why = result.error_message or "; ".join(f"{k}: {v}" for k, v in result.details.items() if v)
        worst.append({
            "test_case_key": row.test_case_key, "model_key": row.model_key, "score": score,
            "input": clip(row.input, TEXT_LIMIT),
            "actual_output": WITHHELD if ev.cls.sensitive_outputs else clip(row.actual_output, TEXT_LIMIT),
            "why": clip(why, CELL_LIMIT),
        })
    # The leader gets a star and a bold row only when it is strictly ahead: with a tie at the
    # top, the ranking's order is only the model names' order.
    ranking = board["ranking"]
    top = [aggregates[model].get(ev.primary.key) for model in ranking[:2]]
    leader = ranking[0] if len(top) == 2 and top[0] is not None and top[0] != top[1] else None
    return {
        "id": ev.cls.id,
        # Two jobs of one evaluator (different parameters) must stay apart on the page.
        "display_name": ev.cls.display_name if ev.label in ("", ev.cls.id) else f"{ev.cls.display_name} ({ev.label})",
        "label": ev.label or ev.cls.id,
        "tagline": ev.cls.tagline,
        "anchor": f"ev-{ev.label or ev.cls.id}",
        "dir_name": dir_name,
        "fragment_href": f"{dir_name}/{names.HTML_FRAGMENT}/{names.mime_dir(names.MIME_HTML)}/{names.EXPLANATION_STEM}.html",
        "board": board,
        "leader": leader,
        "metrics": metrics,
        "primary": primary,
        "primary_by_model": {model: values.get(ev.primary.key) for model, values in aggregates.items()},
        "problems": problems,
        "insights": insights,
        "tables": [{"title": t.title, "columns": [clip(c, CELL_LIMIT) for c in t.columns],
                    "rows": [[clip(cell, CELL_LIMIT) for cell in row] for row in t.rows]} for t in ev.tables],
        "worst": worst[:WORST_ROWS_LIMIT],
        "worst_limit": WORST_ROWS_LIMIT,
        "row_count": len(ev.scored),
        "skipped_count": len(ev.skipped),
    }


def render_fragment(view: dict[str, Any]) -> str:
    return _environment().get_template("fragment.html.j2").render(ev=view, style=_style())


def render_index(run: dict[str, Any], views: list[dict[str, Any]]) -> str:
    return _environment().get_template("index.html.j2").render(run=run, evaluators=views, style=_style())
