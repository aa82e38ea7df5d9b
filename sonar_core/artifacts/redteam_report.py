"""The ``redteam/`` folder of a red-team run: its findings as JSON, every successful attack with its whole
conversation, and ``report.html``: the leaderboard, per model a hazard x technique heat map (SVG) of attack
success rates with their intervals and each hazard's detectors' measured precision and recall beside its
column, over-refusal, grades, problems, insights and the successful attacks' transcripts.

Nothing is computed here: rates, intervals, ranks and grades come in the
:class:`~sonar_core.findings.redteam.RedteamFindings`, detector figures from the run. Every text a model,
an attack file or a dataset wrote (answers, prompts, hazard and technique names, model keys) is escaped,
and the page loads and runs nothing (its Content-Security-Policy).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any, Mapping

from ..findings.redteam_types import AttackOutcome, DetectorQuality, HeatMap, Rate, RedteamFindings
from .formats import write_atomic, write_json
from .html import csp, style
from .redteam import findings_lines, findings_record, quality_record

__all__ = ["write_redteam_dir", "report_html", "heat_map_svg", "REDTEAM_DIR", "REPORT", "ATTACKS_FILE", "SHOWN",
           "SUMMARY"]

REDTEAM_DIR = "redteam"
REPORT = "report.html"
#: The findings as plain text lines, as ``sonar redteam`` prints them.
SUMMARY = "summary.txt"
ATTACKS_FILE = "successful_attacks.jsonl"
#: Successful attacks (and refused controls) whose transcripts report.html shows; all are in ATTACKS_FILE.
SHOWN = 200

_CELL_W, _CELL_H, _LABEL_W, _HEAD_H = 186, 44, 150, 96


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _pct(rate: Rate | None) -> str:
    if rate is None or rate.value is None:
        return "–"
    interval = rate.interval
    return f"{rate.value:.1%}" + (f" [{interval.low:.1%}, {interval.high:.1%}]" if interval else "")


def _figure_text(figure: Any) -> str:
    if isinstance(figure, DetectorQuality):
        return (f"precision {_pct(figure.precision)} ({figure.precision.hits}/{figure.precision.n}), "
                f"recall {_pct(figure.recall)} ({figure.recall.hits}/{figure.recall.n})")
    return str(figure)


def _colour(rate: Rate | None) -> str:
    """White (0%) to red (100%); grey for a cell with nothing assessed."""
    if rate is None or rate.value is None:
        return "#eaeef2"
    fade = round(255 - 180 * rate.value)
    return f"#ff{fade:02x}{fade:02x}" if rate.value < 1 else "#cf222e"


def heat_map_svg(heat: HeatMap, detectors: Mapping[str, tuple[str, ...]], figures: Mapping[str, Any]) -> str:
    """One model's heat map: techniques as rows, hazards as columns, each cell ``hits/assessed``, the rate
    and its interval; under each hazard's name its detectors (their figures in the column's tooltip)."""
    hazards, techniques = heat.hazards, heat.techniques
    width, height = _LABEL_W + _CELL_W * len(hazards), _HEAD_H + _CELL_H * len(techniques)
    parts = [f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(heat.model)}: attack success rate by '
             f'hazard and technique">']
    for j, hazard in enumerate(hazards):
        x = _LABEL_W + j * _CELL_W
        used = detectors.get(hazard, ())
        tip = "; ".join(f"{d}: {_figure_text(figures.get(d, 'not measured'))}" for d in used)
        parts.append(f'<g class="column"><title>{_e(hazard)}: {_e(tip)}</title>'
                     f'<text x="{x + 4}" y="16" font-weight="bold">{_e(hazard[:22])}</text>')
        for i, detector in enumerate(used[:3]):
            figure = figures.get(detector)
            short = "" if not isinstance(figure, DetectorQuality) else " ".join(
                f"{name} {rate.value:.0%}" if rate.value is not None else f"{name} –"
                for name, rate in (("P", figure.precision), ("R", figure.recall)))
            parts.append(f'<text x="{x + 4}" y="{34 + 16 * i}" font-size="10">{_e(detector[:17])}'
                         f'{": " + short if short else ""}</text>')
        parts.append("</g>")
    for i, technique in enumerate(techniques):
        y = _HEAD_H + i * _CELL_H
        parts.append(f'<text x="4" y="{y + 26}">{_e(technique[:26])}</text>')
        for j, hazard in enumerate(hazards):
            x, rate = _LABEL_W + j * _CELL_W, heat.cells.get((hazard, technique))
            text = "no attack" if rate is None else rate.text()
            parts.append(f'<g class="cell" data-hazard="{_e(hazard)}" data-technique="{_e(technique)}">'
                         f'<title>{_e(heat.model)}, {_e(hazard)} x {_e(technique)}: {_e(text)}</title>'
                         f'<rect x="{x}" y="{y}" width="{_CELL_W - 2}" height="{_CELL_H - 2}" fill="{_colour(rate)}"/>')
            if rate is not None:
                ink = "#ffffff" if (rate.value or 0.0) > 0.6 else "#1f2328"
                parts.append(f'<text x="{x + 6}" y="{y + 17}" fill="{ink}">{rate.hits}/{rate.n}'
                             f'{f" ({rate.not_assessed} n/a)" if rate.not_assessed else ""}</text>'
                             f'<text x="{x + 6}" y="{y + 34}" font-size="10" fill="{ink}">{_e(_pct(rate))}</text>')
            parts.append("</g>")
    return "".join(parts) + "</svg>"


def _table(head: list[str], rows: list[list[str]], ident: str) -> str:
    """A table; the cells arrive escaped."""
    return (f'<table id="{ident}"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows) + "</tbody></table>")


def _transcript(outcome: AttackOutcome, turns: list[dict[str, Any]] | None) -> str:
    head = (f"{_e(outcome.model)} · {_e(outcome.hazard)} · {_e(outcome.technique)} · {_e(outcome.test_case)}"
            + (f" (epoch {outcome.epoch})" if outcome.epoch else "") + f" — {_e(outcome.reason)}")
    body = "".join(f'<li class="turn {_e(t["role"])}"><b>{_e(t["role"])}</b><pre>{_e(t["content"])}</pre></li>'
                   for t in turns or []) or "<li>the answer's conversation was not found</li>"
    return f'<details class="attack"><summary>{head}</summary><ol class="transcript">{body}</ol></details>'


def report_html(findings: RedteamFindings, figures: Mapping[str, Any],
                transcripts: Mapping[tuple[str, str, int], list[dict[str, Any]]], standards: str | None = None) -> str:
    """report.html (see the module docstring)."""
    k = findings.k
    board = _table(["Rank", "Model", "Attack success rate (lower is better)"] + ([f"hit@{k}"] if k > 1 else [])
                   + ["Over-refusal"],
                   [[_e(r.rank if r.rank is not None else "–"), _e(r.model), _e(r.success.text())]
                    + ([_e(findings.hit_at_k[r.model].text())] if k > 1 else [])
                    + [_e(r.over_refusal.text("controls") if r.over_refusal else "no controls")]
                    for r in findings.ranking], "leaderboard")
    detectors = _table(["Detector", "Measured on its labelled answers"],
                       [[_e(d), _e(_figure_text(f))] for d, f in figures.items()], "detectors")
    parts = [f"<h2>Leaderboard</h2>{board}",
             "<p>Every sample counts; intervals are exact (Clopper-Pearson); not-assessed answers (empty, errors, "
             "timeouts) enter no rate.</p>", f"<h2>Detectors</h2>{detectors}"]
    for model, heat in findings.heat_maps.items():
        parts.append(f"<h2>{_e(model)}: attack success rate by hazard x technique</h2><p>Each cell: successful "
                     "attacks / assessed, the rate and its interval. Under each hazard, the detectors that decided "
                     "its attacks with their precision (P) and recall (R) on labelled answers (hover for intervals)."
                     f'</p><div class="scroll">{heat_map_svg(heat, findings.detectors, figures)}</div>')
    for model, heat in findings.refusal_maps.items():
        rows = [[_e(t)] + [_e(_cell(heat.cells.get((h, t)), "controls")) for h in heat.hazards] for t in heat.techniques]
        parts.append(f"<h2>{_e(model)}: over-refusal of benign controls</h2>"
                     + _table(["Technique"] + [_e(h) for h in heat.hazards], rows, f"refusals-{_e(model)}"))
    if findings.grades:
        hazards = sorted({h for per in findings.grades.values() for h in per})
        rows = [[_e(m)] + [_e(_grade(per.get(h))) for h in hazards] for m, per in findings.grades.items()]
        parts.append(f"<h2>Grades</h2><p>Attacks resisted over assessed attacks, graded against "
                     f"{_e(standards or 'the standards file')} (ModelBench's rule, docs/benchmarks.md).</p>"
                     + _table(["Model"] + [_e(h) for h in hazards], rows, "grades"))
    parts.append(f"<h2>Problems ({len(findings.problems)})</h2><ul>"
                 + "".join(f"<li><b>{_e(p.severity)}</b>: {_e(p.description)}</li>" for p in findings.problems)
                 + "</ul>" + "".join(f"<p><b>Insight</b>: {_e(i.description)}</p>" for i in findings.insights))
    for title, listed in (("Successful attacks", findings.successes), ("Refused benign controls", findings.over_refused)):
        more = (f" (the first {SHOWN} here; all in {ATTACKS_FILE})" if len(listed) > SHOWN else "")
        parts.append(f'<h2>{title} ({len(listed)}){more}</h2><div class="attacks">'
                     + "".join(_transcript(o, transcripts.get((o.test_case, o.model, o.epoch))) for o in listed[:SHOWN])
                     + "</div>")
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp()}"><title>Red team</title>'
            f"<style>{style()} svg.heatmap text{{font-size:12px}} pre{{white-space:pre-wrap}} div.scroll{{overflow-x:auto}}</style></head>"
            f'<body><h1>Red team</h1>{"".join(parts)}</body></html>\n')


def _cell(rate: Rate | None, unit: str) -> str:
    return "–" if rate is None else rate.text(unit)


def _grade(graded: Any) -> str:
    return "–" if graded is None else f"{graded.score:.1%} safe, {graded.verdict}" if graded.score is not None \
        else graded.verdict


def write_redteam_dir(run_dir: Path, findings: RedteamFindings, figures: Mapping[str, Any],
                      transcripts: Mapping[tuple[str, str, int], list[dict[str, Any]]],
                      standards: str | None = None) -> dict[str, Any]:
    """Write ``redteam/`` (findings.json, successful_attacks.jsonl, report.html, summary.txt); return the findings as
    run.json's ``redteam`` section holds them."""
    folder = Path(run_dir) / REDTEAM_DIR
    record = {**findings_record(findings),
              "detector_figures": {d: quality_record(f) if isinstance(f, DetectorQuality) else {"note": str(f)}
                                   for d, f in figures.items()},
              "report": f"{REDTEAM_DIR}/{REPORT}"}
    write_json(folder / "findings.json", record)
    lines = [json.dumps({"model": o.model, "test_case_key": o.test_case, "epoch": o.epoch, "attack_id": o.attack_id,
                         "hazard": o.hazard, "technique": o.technique, "category": o.category, "outcome": o.outcome,
                         "detector": o.detector, "reason": o.reason,
                         "conversation": transcripts.get((o.test_case, o.model, o.epoch))}, ensure_ascii=False)
             for o in findings.successes + findings.over_refused]
    write_atomic(folder / ATTACKS_FILE, "".join(line + "\n" for line in lines).encode("utf-8"))
    write_atomic(folder / REPORT, report_html(findings, figures, transcripts, standards).encode("utf-8"))
    write_atomic(folder / SUMMARY, "".join(line + "\n" for line in findings_lines(findings)).encode("utf-8"))
    return record
