"""The comparison folder ``sonar compare`` writes: comparison.html, comparison.json, comparison.md.

Serialises :func:`sonar_core.findings.comparison.compare_runs`'s result (a
:class:`~sonar_core.findings.comparison_types.Comparison`) only; comparison.json's shape is
:mod:`.comparison_json`'s. The page follows
the drill-down pages' rule (:mod:`.case_pages`): every text from a dataset, a model or a run
goes through ``html.escape``; links are relative paths from the comparison folder to each
run's case page (``cases/<case_page_name(key)>``), written only when that page exists.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import Any

from .. import names
from ..findings.comparison_types import Comparison, EvaluatorComparison, PairedComparison, SideMean
from .comparison_json import comparison_json
from .formats import write_json
from .html import csp, style

__all__ = ["write_comparison", "comparison_json", "comparison_markdown", "partial_lines", "FLIPS_SHOWN"]

#: Flipped rows listed per metric and model on the page (comparison.json lists them all).
FLIPS_SHOWN = 200


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def _side(side: SideMean) -> str:
    if side.value is None:
        return "–"
    return f"{_num(side.value)} [{_num(side.ci_low)}, {_num(side.ci_high)}] n={side.n}"


def _p(value: float | None) -> str:
    return "–" if value is None else format(value, ".4g")


def _p_value(test: PairedComparison | None) -> str:
    return _p(None if test is None else test.p_value)


def _p_adjusted(test: PairedComparison | None) -> str:
    """The adjusted p-value, with the correction named beside it wherever the correction changed it."""
    text = _p(None if test is None else test.p_adjusted)
    if test is not None and test.correction and test.p_adjusted != test.p_value:
        text += f" ({test.correction.capitalize()}, {test.family_size} tests)"
    return text


def _family_note(ev: EvaluatorComparison) -> str:
    """One sentence on the correction of this evaluator's p-values (empty when no test was corrected)."""
    sizes = {e.test.family_size for e in ev.metrics if e.test and e.test.correction}
    if not sizes:
        return ""
    return (f"p (Holm): Holm's step-down correction across the {max(sizes)} tests of this evaluator that could "
            "reject (every metric and model with a differing pair; a test whose pairs all agree keeps p = 1 and "
            "stays out). Each p-value the correction changed names it beside the figure; p is the raw one.")


def _case_href(out_dir: Path, run_path: str, case: str) -> str | None:
    page = Path(run_path) / names.CASES_DIR / names.case_page_name(case)
    if not page.is_file():
        return None
    return Path(os.path.relpath(page.resolve(), out_dir.resolve())).as_posix()


def _flip_items(out_dir: Path, data: Comparison, cases: tuple[str, ...], kind: str) -> str:
    items = []
    for case in cases[:FLIPS_SHOWN]:
        links = []
        for side in ("a", "b"):
            href = _case_href(out_dir, (data.run_a if side == "a" else data.run_b).path, case)
            if href:
                links.append(f'<a class="case-{side}" href="{_e(href)}">{side.upper()}</a>')
        items.append(f'<li class="flip {kind}"><span class="case">{_e(case)}</span> {" ".join(links)}</li>')
    more = len(cases) - FLIPS_SHOWN
    if more > 0:
        items.append(f"<li>… and {more} more (comparison.json lists every one)</li>")
    return "".join(items)


def _listing(title: str, items: list[str]) -> str:
    if not items:
        return f"<p>{_e(title)}: none.</p>"
    return f"<p>{_e(title)} ({len(items)}):</p><ul class=\"only\">" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def partial_lines(data: Comparison) -> list[str]:
    """What an ``--allow-partial`` comparison left out, one sentence each (empty for a whole comparison)."""
    lines = []
    for side, part in data.partial.items():
        names_ = ", ".join(f"{label} ({why})" for label, why in part.not_finished.items()) or "none"
        lines.append(f"run {side.upper()} did not finish (status {part.status}): only its finished evaluators "
                     f"are compared; not finished: {names_}")
    lines += [f"not comparable: {reason}" for reason in data.not_comparable]
    return lines


def _only(data: Comparison) -> tuple[list[str], list[str]]:
    """The evaluators of run A only and of run B only, each as "label (why)"."""
    return ([f"{e.label} ({e.reason})" for e in data.evaluators_only_a],
            [f"{e.label} ({e.reason})" for e in data.evaluators_only_b])


def comparison_html(data: Comparison, out_dir: Path) -> str:
    a, b = data.run_a.run_id, data.run_b.run_id
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
             f'<meta http-equiv="Content-Security-Policy" content="{_e(csp())}">\n',
             f"<title>Sonar comparison: {_e(a)} → {_e(b)}</title>\n",
             '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
             f"<style>{style()}</style></head>\n<body><main class=\"wide\">\n",
             f"<h1>Comparison: <span id=\"run-a\">{_e(a)}</span> (A) → <span id=\"run-b\">{_e(b)}</span> (B)</h1>\n",
             f"<p id=\"verdict\">{data.regressions} significant regression(s) at confidence "
             f"{data.confidence_level:g} (Holm-adjusted within each evaluator).</p>\n"]
    if partial_lines(data):  # --allow-partial: what the comparison left out, before anything else
        parts.append('<ul id="partial">' + "".join(f"<li>{_e(line)}</li>" for line in partial_lines(data)) + "</ul>\n")
    if data.problems:
        parts.append('<h2>Regressions</h2><ul id="regressions">')
        parts += [f'<li class="sev-{_e(p.severity)}">{_e(p.severity)}: {_e(p.description)}</li>'
                  for p in data.problems]
        parts.append("</ul>\n")
    parts.append("<h2>In one run only</h2>\n")
    only_a, only_b = _only(data)
    parts.append(_listing("Models only in A", list(data.models_only_a))
                 + _listing("Models only in B", list(data.models_only_b)))
    parts.append(_listing("Test cases only in A", list(data.test_cases_only_a))
                 + _listing("Test cases only in B", list(data.test_cases_only_b)))
    parts.append(_listing("Evaluators only in A", only_a) + _listing("Evaluators only in B", only_b))
    for ev in data.evaluators:
        parts.append(f'<section class="evaluator" data-label="{_e(ev.label_b)}"><h2>{_e(ev.label_b)}</h2>\n'
                     f"<p>{ev.shared_rows} shared rows; {ev.rows_only_a} only in A, {ev.rows_only_b} only in B.</p>\n"
                     '<table class="metrics"><thead><tr><th>Metric</th><th>Model</th><th>A [95% interval]</th>'
                     "<th>B [interval]</th><th>Δ (B − A)</th><th>Test</th><th>p</th><th>p (Holm)</th>"
                     "<th>pass → fail</th><th>fail → pass</th></tr></thead><tbody>\n")
        flips_html = []
        for entry in ev.metrics:
            test = entry.test
            cls = "regression" if entry.regression else ("significant" if entry.significant else "")
            to_fail, to_pass = entry.flips.pass_to_fail, entry.flips.fail_to_pass
            parts.append(f'<tr class="{cls}" data-metric="{_e(entry.metric)}" data-model="{_e(entry.model)}">'
                         f"<td>{_e(entry.metric_name)}</td><td>{_e(entry.model)}</td>"
                         f"<td>{_e(_side(entry.a))}</td><td>{_e(_side(entry.b))}</td>"
                         f"<td>{_num(entry.delta, '+.4f')}</td><td>{_e(test.test if test else '–')}</td>"
                         f"<td>{_p_value(test)}</td><td>{_e(_p_adjusted(test))}</td>"
                         f"<td>{len(to_fail)}</td><td>{len(to_pass)}</td></tr>\n")
            if to_fail or to_pass:
                flips_html.append(f'<h3>{_e(entry.metric_name)} · {_e(entry.model)}</h3><ul class="flips">'
                                  + _flip_items(out_dir, data, to_fail, "pass-to-fail")
                                  + _flip_items(out_dir, data, to_pass, "fail-to-pass") + "</ul>\n")
        parts.append("</tbody></table>\n")
        if _family_note(ev):
            parts.append(f'<p class="note holm">{_e(_family_note(ev))}</p>\n')
        if flips_html:
            parts.append("<details open><summary>Rows that flipped (pass → fail first; A and B open each run's "
                         "case page)</summary>" + "".join(flips_html) + "</details>\n")
        parts.append("</section>\n")
    parts.append("</main></body></html>\n")
    return "".join(parts)


def comparison_markdown(data: Comparison) -> str:
    """The summary: verdict, regressions, what is in one run only, and one table per evaluator."""
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = [f"# Comparison: {cell(data.run_a.run_id)} (A) → {cell(data.run_b.run_id)} (B)", "",
             f"{data.regressions} significant regression(s) at confidence {data.confidence_level:g} "
             "(Holm-adjusted within each evaluator).", ""]
    lines += [f"- **Partial:** {cell(line)}" for line in partial_lines(data)] + ([""] if partial_lines(data) else [])
    for problem in data.problems:
        lines.append(f"- **{problem.severity}** {cell(problem.description)}")
    if data.problems:
        lines.append("")
    only_a, only_b = _only(data)
    for title, items in (("Models only in A", data.models_only_a), ("Models only in B", data.models_only_b),
                         ("Test cases only in A", data.test_cases_only_a),
                         ("Test cases only in B", data.test_cases_only_b),
                         ("Evaluators only in A", only_a), ("Evaluators only in B", only_b)):
        lines.append(f"- {title}: {', '.join(cell(i) for i in items) if items else 'none'}")
    for ev in data.evaluators:
        lines += ["", f"## {cell(ev.label_b)}", "",
                  "| Metric | Model | A | B | Δ | Test | p | p (Holm) | pass→fail | fail→pass |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for e in ev.metrics:
            mark = " **regression**" if e.regression else ""
            lines.append(f"| {cell(e.metric_name)} | {cell(e.model)} | {_side(e.a)} | {_side(e.b)} | "
                         f"{_num(e.delta, '+.4f')}{mark} | {e.test.test if e.test else '–'} | "
                         f"{_p_value(e.test)} | {_p_adjusted(e.test)} | "
                         f"{len(e.flips.pass_to_fail)} | {len(e.flips.fail_to_pass)} |")
        if _family_note(ev):
            lines += ["", _family_note(ev)]
    return "\n".join(lines) + "\n"


def write_comparison(data: Comparison, out_dir: Path) -> None:
    """Write comparison.json, comparison.md and comparison.html into ``out_dir`` (created)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / names.COMPARISON_JSON, comparison_json(data))
    (out_dir / names.COMPARISON_MD).write_text(comparison_markdown(data), encoding="utf-8")
    (out_dir / names.COMPARISON_HTML).write_text(comparison_html(data, out_dir), encoding="utf-8")
