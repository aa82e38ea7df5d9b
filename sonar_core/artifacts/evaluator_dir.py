"""Writes one evaluator's whole result folder from its findings (everything but the log, which the
runner owns). Nothing is computed here: problems, insights and the leaderboard come in the findings.

The done marker is written last, so a folder without it is known to be incomplete and a
resumed run recomputes it.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from .. import names
from ..named_files import write_text
from ..contract import ResultKind
from .board_files import board_json, judge_trust_json, leaderboard_files
from .markdown import leaderboard_markdown, report_markdown
from .descriptor import descriptor
from .columnar import write_row_results
from .csv_cells import neutralise_row, write_csv_rows
from .formats import write_atomic, write_format, write_json
from .jsontext import Fragments
from .html import evaluator_view, render_fragment
from .items import insight_json, problem_json
from .drilldown import evaluator_rows
from .views import EvaluatorSummaryJson

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.evaluator import EvaluatorFindings
    from ..findings.scored import ScoredEvaluator

__all__ = ["write_evaluator_dir", "write_failed_marker", "mark_finished"]


def safe_file_stem(name: str) -> str:
    """A file name stem made only of letters, digits, '_', '-' and '.', never a path.

    Table names may come from model keys, which come from datasets: they must not be able
    to climb out of work/ or name a hidden file.
    """
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "table"
    return stem[:120]


def _write_tables(ev: "ScoredEvaluator", work: Path, csv_formula_escape: bool) -> None:
    used: set[str] = set()
    for table in ev.tables:
        stem, n = safe_file_stem(table.name), 2
        while stem in used:  # two names that sanitise alike keep both files
            stem, n = f"{safe_file_stem(table.name)}_{n}", n + 1
        used.add(stem)
        write_json(work / f"{stem}.json", {
            "schema_version": names.SCHEMA_VERSION, "name": table.name, "title": table.title,
            "model_key": table.model_key, "columns": table.columns, "rows": table.rows,
        })
        buffer = io.StringIO()
        rows = [table.columns, *table.rows]
        write_csv_rows(buffer, csv.writer(buffer, lineterminator="\n"),
                       [neutralise_row(row) for row in rows] if csv_formula_escape else rows)
        write_text(work / f"{stem}.csv", buffer.getvalue())


def _zip_work_dir(work: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(work.rglob("*")):
            if path.is_file():
                # Fixed timestamps keep the archive identical between equal runs.
                info = zipfile.ZipInfo(str(Path(names.WORK_DIR) / path.relative_to(work)), date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def write_evaluator_dir(findings: EvaluatorFindings, folder: Path, *, csv_formula_escape: bool = True,
                        fragments: Fragments | None = None, mark_done: bool = True,
                        columnar_only_above: int | None = None) -> EvaluatorSummaryJson:
    """Write every artifact of one evaluator's ``findings`` into ``folder``; return what run.json and
    index.html need.

    ``csv_formula_escape``: neutralise CSV text cells a spreadsheet would run as formulas
    (:mod:`.csv_cells`); JSON and .jay keep the exact text either way. ``fragments``: the run's
    cache of JSON text, so that the problems and insights, which run.json repeats, are encoded once.
    ``mark_done``: write the done marker last (False: the caller does, with :func:`mark_finished`).
    """
    ev = findings.scored
    fragments = fragments if fragments is not None else Fragments()
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / names.RESULT_DESCRIPTOR, descriptor(ev.cls, ev.params, ev.thresholds))
    if ev.params.get("save_llm_result", True):
        write_row_results(ev, folder, csv_formula_escape,  # Parquet; JSON, CSV and .jay up to columnar_only_above rows
                          judge_trust_json(findings.judge_trust) if findings.judge_trust is not None else None, columnar_only_above)

    board = board_json(findings.board, ev)
    board_md = leaderboard_markdown(ev, board)
    leaderboard_dir = folder / (names.BOOL_LEADERBOARD if ev.cls.kind is ResultKind.BOOL else names.HEATMAP_LEADERBOARD)
    write_format(leaderboard_dir, names.MIME_JSON, leaderboard_files(ev, board))
    write_format(leaderboard_dir, names.MIME_MARKDOWN, {f"{names.EXPLANATION_STEM}.md": board_md})
    write_format(leaderboard_dir, names.MIME_LEADERBOARD_MARKDOWN, {f"{names.EXPLANATION_STEM}.md": board_md})

    problems, insights = [problem_json(p) for p in findings.problems], [insight_json(i) for i in findings.insights]
    fragments.keep(*problems, *insights)
    write_json(folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE, problems, fragments)
    write_json(folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE, insights, fragments)

    work = folder / names.WORK_DIR
    work.mkdir(exist_ok=True)
    _write_tables(ev, work, csv_formula_escape)
    write_text(work / names.REPORT_MD, report_markdown(ev, board_md, problems, insights))

    view = evaluator_view(findings, board, folder.name, problems, insights)
    write_format(folder / names.HTML_FRAGMENT, names.MIME_HTML, {f"{names.EXPLANATION_STEM}.html": render_fragment(view)})
    write_format(folder / names.WORK_ARCHIVE, names.MIME_ZIP, {f"{names.EXPLANATION_STEM}.zip": _zip_work_dir(work)})
    summary: EvaluatorSummaryJson = {"schema_version": names.SCHEMA_VERSION, "view": {k: v for k, v in view.items() if k != "worst"},
               "problems": problems, "insights": insights, "test_cases": evaluator_rows(findings.cases)}
    write_json(folder / names.EVALUATOR_SUMMARY, summary, fragments)
    if mark_done:
        mark_finished(folder)
    return summary


def mark_finished(folder: Path) -> None:
    """The done marker, last: a folder with it is finished (``--resume`` keeps it). Written whole or not at all:
    a run killed as the marker appears must not leave it empty (a replay would write it whole)."""
    write_atomic(folder / names.DONE_MARKER, b"done\n")


def write_failed_marker(folder: Path, error: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / names.FAILED_MARKER, error + "\n")
