"""The ``benchmark/`` folder of a benchmark run, and the grade table index.html shows at its top.

Nothing is computed here: the scores, intervals and grades come in the
:class:`~sonar_core.findings.benchmark_scores.BenchmarkFindings`. The folder holds
``benchmark.json`` (everything), ``grades.csv`` (one line per model and hazard, and per model for the
benchmark), ``unsafe_items.csv`` (every unsafe item: model, hazard, test, row), ``report.md`` and, in
a calibration run, a copy of the standards file it wrote.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from .. import names
from ..jsontypes import JsonObject
from .views import BenchmarkView
from .csv_cells import neutralise_row
from .formats import write_atomic, write_json

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.benchmark_scores import BenchmarkFindings
    from ..findings.grades import Graded

__all__ = ["write_benchmark_dir", "benchmark_json", "benchmark_view", "grades_markdown", "FAILING_SHOWN"]

#: Unsafe items index.html lists per hazard and model (every one is in unsafe_items.csv).
FAILING_SHOWN = 50

_GRADE_COLUMNS = ["model", "scope", "hazard", "hazard_key", "safe", "samples", "score", "interval_low",
                  "interval_high", "reference", "numeric_grade", "text_grade", "verdict"]
_FAILING_COLUMNS = ["model", "hazard", "test", "key", "test_case_key", "value"]


def _grade_line(model: str, scope: str, hazard: str, key: str, graded: Graded) -> list[Any]:
    low, high = graded.interval or (None, None)
    return [model, scope, hazard, key, graded.safe, graded.scored, graded.score, low, high, graded.reference,
            graded.numeric_grade, graded.text_grade, graded.verdict]


class GradedJson(TypedDict):
    """A graded score (a model's benchmark or hazard): safe of ``samples``, interval, reference and grade."""

    score: float | None
    safe: int
    samples: int
    interval: list[float] | None
    reference: float | None
    numeric_grade: int | None
    text_grade: str | None
    verdict: str


class HazardJson(TypedDict):
    hazard: str
    hazard_key: str
    name: str
    tests: list[str]


class ModelResultsJson(TypedDict):
    """One model's grades: the benchmark's, each hazard's, and each test's safe items."""

    benchmark: GradedJson
    hazards: dict[str, GradedJson]
    tests: dict[str, JsonObject]


class BenchmarkJson(TypedDict):
    """benchmark/benchmark.json and run.json's ``benchmark``."""

    benchmark: str
    version: str
    name: str
    calibration: bool
    standards: str | None
    reference: float | None
    models: list[str]
    hazards: list[HazardJson]
    results: dict[str, ModelResultsJson]


def graded_json(graded: Graded) -> GradedJson:
    interval = graded.interval
    return {"score": graded.score, "safe": graded.safe, "samples": graded.scored,
            "interval": list(interval) if interval else None, "reference": graded.reference,
            "numeric_grade": graded.numeric_grade, "text_grade": graded.text_grade, "verdict": graded.verdict}


def benchmark_json(findings: BenchmarkFindings) -> BenchmarkJson:
    """The benchmark's findings as benchmark.json and run.json's ``benchmark`` hold them."""
    d = findings.definition
    return {
        "benchmark": d.uid, "version": d.version, "name": d.title, "calibration": findings.calibrating,
        "standards": findings.standards_source or None, "reference": findings.benchmark_reference,
        "models": findings.models,
        "hazards": [{"hazard": h.uid, "hazard_key": h.hazard_key, "name": h.title, "tests": h.tests}
                    for h in d.hazards],
        "results": {model: {
            "benchmark": graded_json(findings.overall[model]),
            "hazards": {uid: graded_json(r.graded) for uid, r in findings.hazards[model].items()},
            "tests": {uid: asdict(per_model[model]) for uid, per_model in findings.tests.items()},
        } for model in findings.models},
    }


def _csv(header: list[str], lines: list[list[Any]], escape: bool) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for line in [header] + lines:
        cells = ["" if cell is None else cell for cell in line]
        writer.writerow(neutralise_row(cells) if escape else cells)
    return buffer.getvalue().encode("utf-8")


def _number(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def _md(text: Any) -> str:
    # Keys come from datasets: a pipe or a line break must not break the table.
    return str(text).replace("|", "\\|").replace("\n", " ")


def grades_markdown(findings: BenchmarkFindings) -> str:
    """The grades as markdown: one table of hazards by model, then each model's scores."""
    d = findings.definition
    lines = [f"# Benchmark {_md(d.title)} (`{_md(d.uid)}` version {_md(d.version)})", ""]
    if findings.calibrating:
        lines += ["Calibration run: scores only, no grades; the standards file takes each hazard's lowest score.", ""]
    else:
        lines += [f"Graded against `{_md(findings.standards_source)}` (ModelBench's v1.0 grading rule; "
                  f"docs/benchmarks.md). Scores are the fraction of safe items with their 95% Clopper-Pearson "
                  f"interval.", ""]
    header = ["Model", "Benchmark"] + [_md(h.title) for h in d.hazards]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for model in findings.models:
        cells = [_md(model), _cell(findings.overall[model], findings.calibrating)]
        cells += [_cell(findings.hazards[model][h.uid].graded, findings.calibrating) for h in d.hazards]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for model in findings.models:
        lines += [f"## {_md(model)}", ""]
        for hazard in d.hazards:
            result = findings.hazards[model][hazard.uid]
            g = result.graded
            low, high = g.interval or (None, None)
            lines.append(f"- **{_md(hazard.title)}** (`{_md(hazard.hazard_key)}`): {g.safe} of {g.scored} items safe, "
                         f"score {_number(g.score)} [{_number(low)}, {_number(high)}], reference "
                         f"{_number(g.reference)}: {_md(g.verdict)}; {len(result.failing)} unsafe item(s)")
        lines.append("")
    return "\n".join(lines)


def _cell(graded: Graded, calibrating: bool) -> str:
    if calibrating or graded.numeric_grade is None:
        return f"{_number(graded.score)} ({_md(graded.verdict)})"
    return f"{graded.numeric_grade} {graded.text_grade} ({_number(graded.score)})"


def write_benchmark_dir(folder: Path, findings: BenchmarkFindings, standards: Any = None,
                        csv_formula_escape: bool = True) -> None:
    """Write the benchmark folder (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / names.BENCHMARK_JSON, {"schema_version": names.BENCHMARK_SCHEMA_VERSION,
                                               **benchmark_json(findings)})
    grades, failing = [], []
    for model in findings.models:
        grades.append(_grade_line(model, "benchmark", "", "", findings.overall[model]))
        for uid, result in findings.hazards[model].items():
            grades.append(_grade_line(model, "hazard", uid, result.hazard.hazard_key, result.graded))
            failing += [[model, uid, row.test, row.key, row.test_case_key, row.value] for row in result.failing]
    write_atomic(folder / names.BENCHMARK_GRADES_CSV, _csv(_GRADE_COLUMNS, grades, csv_formula_escape))
    write_atomic(folder / names.BENCHMARK_FAILING_CSV, _csv(_FAILING_COLUMNS, failing, csv_formula_escape))
    write_atomic(folder / names.BENCHMARK_REPORT_MD, grades_markdown(findings).encode("utf-8"))
    if standards is not None:
        write_json(folder / names.BENCHMARK_STANDARDS_JSON, standards.to_json_data())


def benchmark_view(findings: BenchmarkFindings | None, links: dict[str, str] | None = None) -> BenchmarkView | None:
    """What index.html's grade table shows (plain data; the template escapes every text)."""
    if findings is None:
        return None
    links = links or {}
    d = findings.definition
    hazards = [{"uid": h.uid, "title": h.title, "key": h.hazard_key} for h in d.hazards]
    rows = []
    for n, model in enumerate(findings.models):
        cells = []
        for m, hazard in enumerate(d.hazards):
            result = findings.hazards[model][hazard.uid]
            g = result.graded
            cells.append({
                "anchor": f"grade-{n}-{m}", "grade": g.numeric_grade, "text": g.text_grade, "verdict": g.verdict,
                "score": g.score, "interval": g.interval, "safe": g.safe, "samples": g.scored,
                "reference": g.reference, "hazard": hazard.title, "model": model,
                "failing": [{**asdict(row), "href": links.get(row.test_case_key)} for row in result.failing[:FAILING_SHOWN]],
                "failing_total": len(result.failing),
            })
        o = findings.overall[model]
        rows.append({"model": model, "cells": cells, "overall": {
            "grade": o.numeric_grade, "text": o.text_grade, "verdict": o.verdict, "score": o.score,
            "interval": o.interval, "safe": o.safe, "samples": o.scored, "reference": o.reference}})
    return {"uid": d.uid, "title": d.title, "version": d.version, "calibrating": findings.calibrating,
            "standards": findings.standards_source, "reference": findings.benchmark_reference, "hazards": hazards,
            "rows": rows, "folder": names.BENCHMARK_DIR, "failing_csv": f"{names.BENCHMARK_DIR}/{names.BENCHMARK_FAILING_CSV}",
            "failing_shown": FAILING_SHOWN}
