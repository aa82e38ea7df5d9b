"""Writes a generation's report: ``<stem>.report.json`` and ``<stem>.report.html`` (docs/generate.md).

Serialisation only: every figure comes from :class:`~sonar_core.findings.generation_summary.
GenerationFindings`. Every text from a document, a file name or a model is escaped in the HTML,
and the page runs no script and loads nothing (the report's Content-Security-Policy).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import names
from .html import csp, style

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.generation_summary import GenerationFindings, ScoreSummary

__all__ = ["write_generation_report", "render_generation_html"]


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _vectors_reused(graph: dict) -> str:
    """How many chunks kept the vectors of the output's earlier graph (documents added or changed)."""
    count = graph.get("vectors_reused") or 0
    return f" ({count} chunk(s) kept their vectors from the earlier graph)" if count else ""


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _share(summary: ScoreSummary) -> str:
    if not summary.n:
        return "not scored"
    low, high = summary.interval_95
    return f"{summary.passed} of {summary.n} ({summary.share_passed:.0%}; 95% interval {low:.0%}–{high:.0%})"


def render_generation_html(findings: GenerationFindings, suite_name: str) -> str:
    f = findings
    parts = [f"<h1>Generated test set: {_e(suite_name)}</h1>"]
    counts = f.counts
    if f.status == "empty":
        parts.append(f"<p class='problem'><strong>No item was kept:</strong> {_e(f.empty_reason)}</p>")
    parts.append(f"<p>{counts['planned']} planned; {counts['kept']} kept, {counts['flagged']} kept flagged, "
                 f"{counts['dropped']} dropped for quality, {counts['failed']} failed to be written.</p>")
    for note in f.notes:
        parts.append(f"<p class='note'>{_e(note)}</p>")
    parts.append("<h2>Quality</h2>")
    rows = []
    for name in ("groundedness", "answerability", "self_contained", "language_match"):
        summary = f.quality[name]
        rows.append([name, _share(summary), summary.missing, summary.trust or "rule"])
    parts.append(_table(["score", "items passing", "no verdict", "judge trust"], rows))
    similarity = f.quality["near_duplicate"]
    parts.append(f"<p>Near duplicates: {similarity.duplicates} item(s) dropped as a copy of an earlier one; "
                 f"closest pair similarity {_e(similarity.max)}.</p>")
    parts.append(_table(["question similarity to the closest other item", "items"],
                        [[f"{b['from']:.2f}–{b['to']:.2f}", b["items"]] for b in similarity.bins]))
    for name, trust in sorted(f.judges.items()):
        parts.append(f"<p class='judge'>{_e(name)}: {_e(trust.get('summary'))}</p>")
    parts.append("<h2>Coverage</h2>")
    for dimension, table in f.coverage.items():
        parts.append(f"<h3>per {_e(dimension)}</h3>")
        parts.append(_table([dimension, "planned", "kept", "flagged", "dropped", "failed"],
                            [[key, r["planned"], r["kept"], r["flagged"], r["dropped"], r["failed"]]
                             for key, r in table.items()]))
    parts.append("<h2>Dropped, failed and flagged items</h2>")
    parts.append(_table(["item", "status", "type", "source", "why"],
                        [[d.key, d.status, d.type, d.source, d.reason] for d in f.dropped])
                 if f.dropped else "<p>None.</p>")
    parts.append("<h2>Documents</h2>")
    docs = f.documents
    parts.append(f"<p>{docs['read']} document(s) read, {len(docs['skipped'])} skipped; {f.graph['chunks']} chunks "
                 f"kept, {f.graph['duplicates']} duplicate chunk(s) dropped, {f.graph['short_chunks']} too short to "
                 f"seed a question; {f.graph['topics']} topic(s), {f.graph['links']} link(s); graph "
                 f"{'reused' if f.graph['reused'] else 'built'}{_vectors_reused(f.graph)}.</p>")
    if docs["skipped"]:
        parts.append(_table(["skipped file", "why"], [[s["source"], s["reason"]] for s in docs["skipped"]]))
    parts.append("<h2>Calls, tokens and cost</h2>")
    costs = f.costs or {}
    rows = [[key, t.get("calls"), t.get("input_tokens"), t.get("output_tokens"),
             "-" if t.get("cost") is None else f"${t['cost']:.4f}"]
            for key, t in sorted((costs.get("evaluators") or {}).items())]
    parts.append(_table(["purpose", "calls", "input tokens", "output tokens", "cost"], rows) if rows
                 else "<p>No call was made (every answer came from the cache).</p>")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{csp()}\">"
            f"<title>Generated test set: {_e(suite_name)}</title><style>{style()}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def write_generation_report(findings: GenerationFindings, folder: Path, stem: str, suite_name: str) -> dict[str, Path]:
    """Write the JSON and HTML report into ``folder``; returns their paths."""
    paths = {kind: folder / names.GENERATION_FILES[kind].format(stem=stem) for kind in ("report_json", "report_html")}
    payload = {"schema_version": names.GENERATION_REPORT_SCHEMA_VERSION, "suite": suite_name, **asdict(findings)}
    _write(paths["report_json"], json.dumps(payload, indent=1, ensure_ascii=False, default=str) + "\n")
    _write(paths["report_html"], render_generation_html(findings, suite_name))
    return paths
