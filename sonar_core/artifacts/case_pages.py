"""The HTML of the test-case drill-down: ``test_cases.html`` and ``cases/<file>``.

These pages are built with plain string formatting rather than the Jinja templates of the
other pages: a large run writes hundreds of them, and a template costs about 2 ms a page
against about 0.1 ms here. The rule is the templates' rule: every text from a dataset, a
model or a judge goes through :func:`_e` (``html.escape`` with quotes) before it is
written; only Sonar's own stylesheet, script and markup are written as they are. Links go
to names Sonar makes (``case_page_name``), never to a dataset's text.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .html import TEXT_LIMIT, csp, filter_script, style
from .transcript import expected_calls_html, transcript_html
from .verdicts import NOT_SCORED
from .views import CaseView, PageRow, RunView, VerdictView

__all__ = ["matrix_html", "case_html"]


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def _head(title: str, page_csp: str, body_class: str = "wide") -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_e(page_csp)}">\n'
            f"<title>{_e(title)}</title>\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<style>{style()}</style></head>\n<body><main class=\"{body_class}\">\n")


def _tags(case: CaseView, with_original: bool) -> str:
    parts = [f'<span class="tag">{_e(c)}</span>' for c in case["categories"]]
    if case["perturbation"]:
        of = f" of {_e(case['original']['key'])}" if with_original and case["original"] else ""
        parts.append(f'<span class="tag pert">{_e(case["perturbation"])}{of}</span>')
    return "".join(parts)


def _threshold_text(threshold: float | None) -> str:
    """A threshold as shown; views store an infinite one (no value fails it) as None."""
    return "none" if threshold is None else str(threshold)


def verdict_title(book: Any, verdict: VerdictView) -> str:
    """A verdict's tooltip: evaluator, primary metric, value, threshold and message (unescaped)."""
    ev = book.evaluators[verdict["ev"]]
    metric = ev["metrics"][ev["primary"]]
    text = f"{ev['display_name']} · {metric['display_name']}"
    if verdict["value"] is not None:
        text += f" {verdict['value']:.4f}, threshold {_threshold_text(metric['threshold'])}"
    if verdict["why"]:
        text += f": {verdict['why']}"
    return text


def _answer_cell(row: PageRow) -> str:
    klass = "answer withheld" if row["withheld"] else "answer"
    if not row["answer_cell"]:
        inner = '<span class="muted">(empty answer)</span>'
    elif row["answer_long"]:
        inner = f"<details><summary>{_e(row['answer_preview'])}</summary>{_e(row['answer_cell'])}</details>"
    else:
        inner = _e(row["answer_cell"])
    return f'<div class="{klass}">{inner}</div>'


def _verdict_items(book: Any, row: PageRow) -> str:
    items = []
    for v in row["verdicts"]:
        if v is None:
            continue
        name = book.evaluators[v["ev"]]["display_name"]
        items.append(f'<li data-ev="{v["ev"]}" class="{v["status"]}" title="{_e(verdict_title(book, v))}">'
                     f'<span class="ev">{_e(name)}</span><b>{_e(v["text"])}</b></li>')
    return f'<ul class="verdicts">{"".join(items)}</ul>'


def matrix_html(run: RunView, book: Any) -> str:
    """test_cases.html: the test case x model matrix, with Sonar's filter script."""
    script = filter_script()
    shown, total = len(book.cases), book.total_cases
    if total > shown:
        scope = (f'<b id="cap-note">{shown} of {total} test cases shown: the first {book.limit} by key '
                 "(alphabetical order).</b> Every row of every test case is in each evaluator's evaluated dataset "
                 "(<code>global_llm_eval_results</code>).")
    else:
        scope = f"{shown} test cases."
    out = [_head(f"Test cases – Sonar run {run['run_id']}", csp(script)),
           '<p class="nav"><a href="index.html">← Run report</a></p>\n<h1>Test cases × models</h1>\n',
           f'<p class="muted">Run <code>{_e(run["run_id"])}</code> · {scope} '
           "Each cell holds a model's answer (click a long one to expand it) and each evaluator's verdict on it: "
           "✓/✗ for pass/fail evaluators, the primary metric for scores; green is on the right side of the "
           "threshold, red on the wrong side; grey and dashed, a judge that failed its calibration: its verdict is "
           "not counted, or the row was not scored. Open a test case for every metric with its threshold, the "
           "messages and the retrieved context.</p>\n",
           '<div class="filters" id="filters">\n',
           '<label>Evaluator <select id="f-ev"><option value="">all evaluators</option>',
           *(f'<option value="{ev["index"]}">{_e(ev["display_name"])}</option>' for ev in book.evaluators),
           '</select></label>\n<label>Model <select id="f-model"><option value="">all models</option>',
           *(f'<option value="{i}">{_e(m)}</option>' for i, m in enumerate(book.models)),
           '</select></label>\n<label>Category <select id="f-cat"><option value="">all categories</option>',
           *(f'<option value="{i}">{_e(c)}</option>' for i, c in enumerate(book.categories)),
           '</select></label>\n<label><input type="checkbox" id="f-failing"> failing only</label>\n',
           f'<span id="f-count" class="muted" aria-live="polite">{shown} of {shown} test cases shown</span>\n</div>\n',
           '<table id="matrix">\n<thead><tr><th class="case">Test case</th>',
           *(f'<th data-model="{i}">{_e(m)}</th>' for i, m in enumerate(book.models)),
           "</tr></thead>\n<tbody>\n"]
    for case in book.cases:
        fail = ' class="has-fail"' if case["failing"] else ""
        out.append(f'<tr data-cats="{case["category_ids"]}"{fail}>'
                   f'<th class="case"><a href="cases/{case["file"]}">{_e(case["key"])}</a>'
                   f'<div class="q">{_e(case["question_preview"])}</div><div>{_tags(case, True)}</div></th>')
        for i in range(len(book.models)):
            cell = "".join(_answer_cell(r) + _verdict_items(book, r) for r in case["rows"] if r["model_index"] == i)
            out.append(f'<td data-model="{i}">{cell}</td>')
        out.append("</tr>\n")
    out.append(f'</tbody></table>\n<p class="muted">Generated by Sonar {_e(run["sonar_version"])}.</p>\n</main>\n'
               f"<script>{script}</script>\n</body></html>\n")
    return "".join(out)


def _chunks(row: PageRow, withheld_note: str) -> str:
    if row["context_withheld"]:
        return f'<p class="withheld">{_e(withheld_note)}</p>\n'
    if not row["context"]:
        return '<p class="muted">None.</p>\n'
    items = "".join(f"<li><pre>{_e(c)}</pre></li>" for c in row["context"])
    more = row["context_count"] - len(row["context"])
    tail = f'<p class="muted">… {more} more chunk(s) in the evaluated dataset.</p>' if more > 0 else ""
    return f'<ol class="chunks">{items}</ol>{tail}\n'


def _metrics_table(book: Any, case: CaseView) -> str:
    rows = case["rows"]
    if not case["evaluator_ids"]:
        return '<p class="muted">No evaluator scored this test case.</p>\n'
    out = ['<p class="muted">Every evaluator that scored this test case: its verdict per model on its line (the '
           "primary metric, ★), then every metric with the threshold in force; green is on the right side of it, "
           "red on the wrong side. Messages say why a row scored as it did.</p>\n",
           '<table class="case-metrics" id="metrics"><thead><tr><th>Evaluator · metric</th>'
           '<th class="nowrap">Threshold</th>',
           *(f"<th>{_e(r['model'])}</th>" for r in rows), "</tr></thead>\n<tbody>\n"]
    for i in case["evaluator_ids"]:
        ev = book.evaluators[i]
        heads = []
        for r in rows:
            v = r["verdicts"][i]
            heads.append(f'<th class="verdict {v["status"]}">{_e(v["text"])}</th>' if v
                         else '<th class="verdict na">not routed</th>')
        out.append(f'<tr class="ev-head"><th colspan="2"><a href="../index.html#{_e(ev["anchor"])}">'
                   f'{_e(ev["display_name"])}</a></th>{"".join(heads)}</tr>\n')
        for mi, metric in enumerate(ev["metrics"]):
            star = " ★" if metric["is_primary"] else ""
            better = "higher" if metric["higher_is_better"] else "lower"
            cells = []
            for r in rows:
                v = r["verdicts"][i]
                if v is None:
                    cells.append('<td class="na">not routed</td>')
                elif v["status"] == "skip":
                    cells.append('<td class="skip">skipped</td>')
                elif v["status"] == NOT_SCORED:
                    cells.append(f'<td class="{NOT_SCORED}">not scored</td>')
                else:
                    cell = v["metrics"][mi]
                    cells.append(f'<td class="num {cell["status"]}">{_num(cell["value"])}</td>')
            out.append(f'<tr><td>{_e(metric["display_name"])}{star} <span class="muted">({better} better)</span></td>'
                       f'<td class="num">{_e(_threshold_text(metric["threshold"]))}</td>{"".join(cells)}</tr>\n')
        if i in case["evaluators_with_messages"]:
            whys = "".join(f'<td class="why">{_e(r["verdicts"][i]["why"] if r["verdicts"][i] else "")}</td>'
                           for r in rows)
            out.append(f"<tr><td>Message</td><td></td>{whys}</tr>\n")
    out.append("</tbody></table>\n")
    return "".join(out)


def _comparison(book: Any, case: CaseView) -> str:
    perturbation = case["perturbation"] or "perturbed"
    original = case["original"]
    head = f'<thead><tr><th></th><th>Original</th><th>Perturbed ({_e(perturbation)})</th></tr></thead>'
    out = ['<h2 id="comparison">Original and perturbed</h2>\n',
           f'<p class="muted">The original test case <a href="{original["file"]}">{_e(original["key"])}</a> beside '
           f"this {_e(perturbation)} copy, for each model; a flip is a verdict that changed sides of the "
           "threshold.</p>\n",
           f'<table class="answers comparison">{head}<tbody><tr><th>Question</th>'
           f'<td><pre>{_e(original["question"])}</pre></td><td><pre>{_e(case["question"])}</pre></td></tr>'
           "</tbody></table>\n"]
    for pair in case["comparison"]:
        flips = f' <span class="flip">{len(pair["flips"])} flip(s)</span>' if pair["flips"] else ""
        a_row, b_row = pair["original"], pair["perturbed"]
        rows = [f'<tr><th>Answer</th><td><pre class="{"withheld" if a_row["withheld"] else ""}">{_e(a_row["answer"])}'
                f'</pre></td><td><pre class="{"withheld" if b_row["withheld"] else ""}">{_e(b_row["answer"])}</pre>'
                "</td></tr>"]
        for i in case["evaluator_ids"]:
            a, b = a_row["verdicts"][i], b_row["verdicts"][i]
            if not (a or b):
                continue
            flip = "".join(f' <span class="flip">flip: {f["direction"]}</span>' for f in pair["flips"] if f["ev"] == i)
            cells = []
            for v, extra in ((a, ""), (b, flip)):
                if v:
                    cells.append(f'<td class="{v["status"]}" title="{_e(verdict_title(book, v))}">{_e(v["text"])}'
                                 f"{extra}</td>")
                else:
                    cells.append('<td class="na">not routed</td>')
            rows.append(f'<tr><th>{_e(book.evaluators[i]["display_name"])}</th>{"".join(cells)}</tr>')
        out.append(f"<h3>{_e(pair['model'])}{flips}</h3>\n"
                   f'<table class="answers comparison">{head}<tbody>{"".join(rows)}</tbody></table>\n')
    return "".join(out)


def _conversations(book: Any, case: CaseView) -> str:
    """Each model's conversation as a transcript, every verdict beside the turn it judged."""
    out = ['<h2 id="conversation">Conversation</h2>\n<p class="muted">Turns from 0. Verdicts of evaluators that '
           "scored each assistant turn (<code>per_turn</code>) stand beside that turn; the others judged the final "
           "answer or the whole conversation and stand beside the last assistant turn. Beside the transcript, the "
           "dataset's expected tool calls, each marked made (a call of that name with equal arguments) or not.</p>\n"]
    for r in case["rows"]:
        if not r.get("conversation"):
            continue
        whole = [(book.evaluators[v["ev"]]["display_name"], v["text"], v["status"]) for v in r["verdicts"] if v]
        transcript = transcript_html(r["conversation"], r["turn_verdicts"], whole)
        expected = expected_calls_html(r.get("expected_tool_calls"))
        out.append(f"<h3>{_e(r['model'])}</h3>\n"
                   + (f'<div class="conversation-pair">{transcript}{expected}</div>\n' if expected else transcript))
    return "".join(out)


def case_html(run: RunView, book: Any, case: CaseView, withheld_context: str) -> str:
    """cases/<file>: one test case with every model's answer, every metric and the context."""
    rows = case["rows"]
    out = [_head(f"Test case {case['key']} – Sonar run {run['run_id']}", csp()),
           '<p class="nav"><a href="../index.html">← Run report</a> · <a href="../test_cases.html">All test cases</a></p>\n',
           f'<h1>Test case <code id="case-key">{_e(case["key"])}</code></h1>\n<p class="muted">{_tags(case, False)}']
    if case["perturbation"] or case["original"]:
        out.append(f' · perturbation <b>{_e(case["perturbation"] or "unnamed")}</b>')
        original = case["original"]
        if original:
            target = (f'<a href="{original["file"]}">{_e(original["key"])}</a>' if original["file"]
                      else f"{_e(original['key'])} (not among the test cases shown)")
            out.append(f" of {target}")
    if case["comparison"]:
        out.append(' · <a href="#comparison">original beside perturbed</a>')
    if case["variants"]:
        links = ", ".join(f'<a href="{v["file"]}">{_e(v["key"])}</a>' + (f" ({_e(v['perturbation'])})"
                                                                        if v["perturbation"] else "")
                          for v in case["variants"])
        out.append(f" · perturbed copies: {links}")
    out.append(f'</p>\n<h2>Question</h2>\n<pre id="question">{_e(case["question"])}</pre>\n')
    if case["expected"]:
        out.append(f'<h2>Expected answer</h2><pre id="expected">{_e(case["expected"])}</pre>\n')
    if case["condition"] or case["constraints"]:
        out.append("<h3>Conditions</h3>\n")
        if case["condition"]:
            out.append(f"<pre>{_e(case['condition'])}</pre>\n")
        if case["constraints"]:
            out.append('<ul class="items">' + "".join(f"<li><code>{_e(c)}</code></li>" for c in case["constraints"])
                       + "</ul>\n")

    out.append('<h2>Answers</h2>\n<table class="answers" id="answers"><thead><tr><th>LLM</th>'
               + "".join(f"<th>{_e(r['model'])}</th>" for r in rows) + "</tr></thead>\n<tbody>\n<tr><th>Answer</th>"
               + "".join(f'<td><pre class="{"withheld" if r["withheld"] else ""}">'
                         f'{_e(r["answer"]) if r["answer"] else "(empty answer)"}</pre></td>' for r in rows)
               + "</tr>\n<tr><th>Time (s)</th>"
               + "".join(f'<td class="num">{_num(r["duration"], ".3f")}</td>' for r in rows)
               + "</tr>\n<tr><th>Cost (USD)</th>"
               + "".join(f'<td class="num">{_num(r["cost"], ".5f")}</td>' for r in rows) + "</tr>\n")
    if len({r["model"] for r in rows}) < len(rows):  # two rows of one model: tell them apart
        out.append("<tr><th>Row key</th>" + "".join(f"<td>{_e(r['key'])}</td>" for r in rows) + "</tr>\n")
    out.append("</tbody></table>\n")
    if any(r.get("conversation") for r in rows):
        out.append(_conversations(book, case))
    out.append("<h2>Metrics</h2>\n")
    out.append(_metrics_table(book, case))
    if case["comparison"]:
        out.append(_comparison(book, case))
    out.append("<h2>Retrieved context</h2>\n")
    if case["shared_context"] and rows:
        first = rows[0]
        if first["context"] and not first["context_withheld"]:
            out.append(f'<p class="muted">The same {first["context_count"]} chunk(s) for every model.</p>')
        out.append(_chunks(first, withheld_context))
    else:
        for r in rows:
            out.append(f"<h3>{_e(r['model'])}</h3>\n{_chunks(r, withheld_context)}")
    out.append(f'<p class="muted">Generated by Sonar {_e(run["sonar_version"])}. Texts are cut at {TEXT_LIMIT:,} '
               "characters; the full ones are in each evaluator's evaluated dataset.</p>\n</main></body></html>\n")
    return "".join(out)
