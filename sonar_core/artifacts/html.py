"""HTML rendering: each evaluator's fragment and the run's index.html.

(The test-case pages are built in case_pages.py, the charts in charts.py.) Every page is
self-contained (inline CSS and SVG, no external resources) so it opens offline; only the
test case matrix has a script, Sonar's own filter, allowed by its hash in the pages'
Content-Security-Policy (:func:`csp`), which forbids every other script. Templates render
with Jinja2's autoescaping on: every string that came from a dataset, a model or a judge is
HTML-escaped; only Sonar's own stylesheet, script and charts (which escape their labels
themselves, see charts.py) are marked safe.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Sequence

import jinja2
from markupsafe import Markup

from .. import names
from ..findings.types import WEAK_ROWS_LIMIT, LeadProblems, TradeoffRow
from ..findings.wording import kappa_bar, p_text, row_why
from ..contract import finite_or_none
from .charts import metric_bars_svg, pass_fail_svg, tradeoff_svg
from .board_files import BoardJson
from .record_shapes import InsightJson, ProblemJson
from .views import BenchmarkView, EvaluatorView, LeadView, RunView, TradeoffView

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.evaluator import EvaluatorFindings
    from ..findings.judge_status import JudgeTrust

__all__ = [
    "csp",
    "evaluator_chart",
    "evaluator_view",
    "filter_script",
    "lead_view",
    "render_fragment",
    "render_index",
    "row_why",
    "style",
    "tradeoff_view",
]

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


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    # Compiling the templates is about 0.15 s of every run; jinja's cache (a private per-user temp
    # folder, keyed by each template's source) keeps the compiled code between processes.
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no safe temp folder: compile each time
        return None


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("sonar_core", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["format_number"] = lambda v, spec: format(v, spec)
    env.globals["evaluator_chart"] = evaluator_chart
    env.globals["p_text"] = p_text
    return env


@lru_cache(maxsize=1)
def filter_script() -> str:
    # Sonar's own script, inserted with `|safe` and allowed by its hash in the page's CSP.
    return resources.files("sonar_core").joinpath("templates/_filters.js").read_text(encoding="utf-8")


def csp(script: str | None = None) -> str:
    """The pages' Content-Security-Policy: nothing loads, no script runs but ``script``.

    A second line of defence behind the escaping: should a dataset's markup ever reach a
    page, the browser would still refuse to run it or fetch anything it names.
    """
    scripts = "'none'"
    if script is not None:
        scripts = "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {scripts}; base-uri 'none'; form-action 'none'"


@lru_cache(maxsize=1)
def style() -> str:
    # The templates insert this with `|safe`: it is Sonar's own stylesheet, not data, and
    # autoescaping it would turn `"` and `>` into entities, which CSS does not decode inside
    # <style>, so the rules holding them (the body font, `details > summary`) would be dropped.
    return resources.files("sonar_core").joinpath("templates/_style.css").read_text(encoding="utf-8")


def untrusted_notes(trust: JudgeTrust | None) -> dict[str, str]:
    """For an untrusted judge: ``not_counted_note`` (why no verdict of it counts, for "Weakest answers"),
    and ``not_scored`` (the rows' reason) when its rows were not scored; empty otherwise."""
    if trust is None or trust.counts:
        return {}
    figures = kappa_bar(trust.kappa, trust.min_kappa)
    if trust.scored:
        return {"not_counted_note": f"Not counted: judge {trust.judge} is untrusted ({figures}), so no answer is "
                                    "called weak on its word. Its verdicts are in the evaluated dataset, marked "
                                    "untrusted."}
    reason = f"not scored: judge {trust.judge} is untrusted ({figures})"
    return {"not_scored": reason,
            "not_counted_note": f"Not scored: judge {trust.judge} is untrusted ({figures}), so no row was "
                                "scored (score_untrusted: true scores them anyway, not counted)."}


def evaluator_view(findings: EvaluatorFindings, board: BoardJson, dir_name: str, problems: list[ProblemJson],
                   insights: list[InsightJson]) -> EvaluatorView:
    """Everything the templates show about one evaluator (plain data, no runtime objects).

    Laid out from ``findings`` alone: which means fail their thresholds, the passing rows per model,
    the leader and the weakest rows were concluded there (:mod:`sonar_core.findings.conclusions`).
    ``board``: the findings' board as its files hold it (:func:`.board_files.board_json`); ``problems`` and
    ``insights``: the findings' as their files hold them (:mod:`.items`).
    """
    ev, leaderboard, fallbacks = findings.scored, findings.leaderboard, findings.fallbacks
    trust = findings.board.judge_trust
    not_scored = trust is not None and not trust.scored
    aggregates = {row["model"]: row["metrics"] for row in board["rows"]}
    metrics = []
    for m in ev.cls.metrics:
        metrics.append({
            "key": m.key,
            "display_name": m.display_name,
            "description": m.description,
            "is_primary": m.key == ev.primary.key,
            "higher_is_better": m.higher_is_better,
            # None (JSON null) for an infinite threshold or range end: the view is saved as JSON too.
            "threshold": finite_or_none(ev.thresholds[m.key]),
            "value_range": m.json_range(),
            "role": m.role.value if m.role else None,
            "fails_by_model": dict(leaderboard.fails_by_metric[m.key]),
        })
    primary = next(m for m in metrics if m["is_primary"])
    untrusted = leaderboard.untrusted
    worst = []
    for weak in findings.weakest:
        row, result = weak.row, weak.result
        worst.append({
            "test_case_key": row.test_case_key, "model_key": row.model_key, "score": weak.score,
            "input": clip(row.input, TEXT_LIMIT),
            "actual_output": WITHHELD if ev.cls.sensitive_outputs else clip(row.actual_output, TEXT_LIMIT),
            "why": clip(row_why(result), CELL_LIMIT),
        })
    ranking = board["ranking"]
    leader = leaderboard.leader
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
        # Judge evaluators only (other evaluators' summaries stay as they were): the judge failed its
        # calibration, so the verdicts are shown, marked, and counted nowhere.
        **({"untrusted": untrusted} if trust is not None else {}),
        **untrusted_notes(trust),
        "leader": leader,
        # With paired tests (findings.confidence): each model's test against the leader, and the
        # models it cannot tell from the leader (marked as ties in the reports).
        **({"versus_best": {e["model_b"]: e for e in board["pairwise"] if e["model_a"] == ranking[0]},
            "ties": [row["model"] for row in board["rows"] if row.get("tied_with_best")]}
           if board.get("pairwise") else {}),
        "metrics": metrics,
        "primary": primary,
        "primary_by_model": {model: values.get(ev.primary.key) for model, values in aggregates.items()},
        # Rows on the right side of the primary threshold, per model ([passed, checked]).
        "primary_pass_counts": {model: list(counts) for model, counts in leaderboard.pass_counts.items()},
        "sensitive_outputs": ev.cls.sensitive_outputs,
        "problems": problems,
        "insights": insights,
        "tables": [{"title": t.title, "columns": [clip(c, CELL_LIMIT) for c in t.columns],
                    "rows": [[clip(cell, CELL_LIMIT) for cell in row] for row in t.rows]} for t in ev.tables],
        "worst": worst,
        "worst_limit": WEAK_ROWS_LIMIT,
        # An untrusted judge's rows written as not scored are not counted as scored.
        **({"row_count": 0, "not_scored_count": len(ev.scored)} if not_scored
           else {"row_count": len(ev.scored)}),
        "notes": list(ev.notes),
        "skipped_count": len(ev.skipped),
        # Only where there are some: the other evaluators' summaries stay as they were.
        **({"differences": [d.as_dict() for d in ev.cls.differences]} if ev.cls.differences else {}),
        **({"fallbacks": list(fallbacks)} if fallbacks else {}),
    }


def evaluator_chart(view: EvaluatorView) -> Markup:
    """The chart of one evaluator's view: pass/fail rows for bool evaluators, else primary bars."""
    board, primary = view["board"], view["primary"]
    # An untrusted judge's board ranks no model: its chart shows them in name order, and says why.
    models = board["ranking"] or board.get("unranked_models", [])
    untrusted = (" (not scored: untrusted judge)" if view.get("not_scored")
                 else " (untrusted judge: not counted)" if view.get("untrusted") else "")
    rows = {row["model"]: row for row in board["rows"]}
    # Error bars: each model's interval of the primary metric, where the findings gave one.
    entries = [(rows[m].get("intervals") or {}).get(primary["key"]) or {} for m in models]
    intervals = [(e["ci_low"], e["ci_high"]) if e.get("ci_low") is not None else None for e in entries]
    if board["kind"] == "bool" and all("counts" in rows[m] for m in models):
        share = primary["threshold"] if primary.get("role") == "pass" else None
        return pass_fail_svg(f"{view['display_name']}: passing and failing rows per model{untrusted}", models,
                             [rows[m]["counts"] for m in models], threshold_share=share, leader=view.get("leader"),
                             intervals=intervals if primary.get("role") == "pass" else None)
    return metric_bars_svg(f"{view['display_name']}: {primary['display_name']} per model{untrusted}", models,
                           [view["primary_by_model"].get(m) for m in models], threshold=primary["threshold"],
                           value_range=primary["value_range"], higher_is_better=primary["higher_is_better"],
                           fails=[bool(primary["fails_by_model"].get(m)) for m in models], leader=view.get("leader"),
                           intervals=intervals)


def tradeoff_view(rows: Sequence[TradeoffRow]) -> TradeoffView | None:
    """The quality / cost / speed chart and its table, or None without durations or costs.

    ``rows``: the findings' trade-off (:func:`sonar_core.findings.tradeoff.tradeoff_rows`): quality is a
    model's share of checks passed over every evaluator, with the Pareto fronts it is on.
    """
    svg = tradeoff_svg(rows, "the share of checks passed over every evaluator")
    if svg is None:
        return None
    return {"svg": svg, "rows": [
        {"model": r.model, "passed": r.passed, "checked": r.checked, "quality": r.quality,
         "seconds": r.seconds, "cost": r.cost, "front_cost": r.front_cost,
         "front_time": r.front_time, "front_all": r.front_all}
        for r in rows]}


def lead_view(views: list[EvaluatorView], core: Sequence[ProblemJson], lead: LeadProblems) -> LeadView:
    """The lead lines as the page shows them: ``lead`` (:func:`sonar_core.findings.lead.lead_problems` of the
    same ``core`` problems and ``views``' problems) with each line's evaluator, anchor and most severe problem."""
    shown = []
    for line in lead.shown:
        if line.source is None:
            name, anchor, problems = "Models under test", "hosts", core
        else:
            view = views[line.source]
            name, anchor, problems = view["display_name"], view["anchor"], view["problems"]
        shown.append({"severity": line.severity, "evaluator": name, "anchor": anchor, "counts": line.counts,
                      "description": clip(list(problems)[line.worst]["description"], CELL_LIMIT)})
    return {"total": lead.total, "sources": lead.sources, "shown": shown}


def render_fragment(view: EvaluatorView) -> str:
    return _environment().get_template("fragment.html.j2").render(ev=view, style=style(), csp=csp())


def render_index(run: RunView, views: list[EvaluatorView], lead: LeadProblems, book: Any = None,
                 tradeoff: TradeoffView | None = None, grades: BenchmarkView | None = None) -> str:
    """index.html; ``lead``: the problems it leads with (:func:`sonar_core.findings.lead.lead_problems` of
    ``run``'s ``core_problems`` and ``views``' problems); ``book`` (a Casebook) adds the drill-down link
    and links test cases; ``grades`` (:func:`.benchmark_dir.benchmark_view`) the benchmark's grade table at the top."""
    return _environment().get_template("index.html.j2").render(
        run=run, evaluators=views, style=style(), csp=csp(), book=book,
        links=book.links if book is not None else {}, tradeoff=tradeoff, grades=grades,
        lead=lead_view(views, run.get("core_problems") or (), lead))
