"""`sonar evaluators` at 80 and 100 columns: every id in full, nothing past the edge, a legend (issue 34).

At 100 columns the listing used to print "answer_rele…" three times and never said what J, Q, EA, RC,
AA, C, CV, TC and EO meant.
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess

import pytest

from conftest import BUILT_IN
from sonar_core.contract import Input


def _listing(sonar_cli: str, columns: int) -> list[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    done = subprocess.run([sonar_cli, "evaluators"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _ids_in_full(lines: list[str]) -> set[str]:
    """The ids that begin a table row, whole (a cut id ends in '…' and is not one)."""
    return {cells[0] for line in lines if (cells := line.strip(" │┃").split())} & BUILT_IN


@pytest.mark.parametrize("columns", [80, 100])
def test_the_listing_fits_the_terminal_with_every_id_in_full_and_a_legend(sonar_cli, columns):
    lines = _listing(sonar_cli, columns)
    assert max(len(line) for line in lines) <= columns
    assert _ids_in_full(lines) == BUILT_IN
    assert not any("…" in line for line in lines)
    legend = " ".join(" ".join(lines).split())  # the legend wraps at the terminal's width
    assert "J: asks an LLM judge." in legend and "GPU: uses a GPU when there is one." in legend
    assert "LLM / RAG: evaluates plain LLM answers / RAG answers (with retrieved context)." in legend
    assert ("Inputs every row needs: Q question, EA expected answer, RC retrieved context, AA actual answer, "
            "C conditions, CV conversation, TC expected tool calls, EO expected outcome.") in legend
    assert [needed.short for needed in Input] == ["Q", "EA", "RC", "AA", "C", "CV", "TC", "EO"]


def test_the_narrow_listing_groups_the_flags_by_hand_checked_rows(sonar_cli):
    rows = {cells[0]: cells[1:] for line in _listing(sonar_cli, 80) if (cells := line.split()) and cells[0] in BUILT_IN}
    # Kind, then the datasets it evaluates, the judge tick, the inputs every row needs, the GPU tick.
    assert rows["context_precision"] == ["score", "RAG", "✓", "Q", "EA", "RC"]
    assert rows["answer_semantic_similarity"] == ["score", "LLM", "RAG", "EA", "AA", "✓"]
    assert rows["tool_call_accuracy"] == ["score", "LLM", "CV", "TC"]


def test_a_wide_terminal_keeps_one_column_per_flag(sonar_cli):
    lines = _listing(sonar_cli, 200)
    header = next(line for line in lines if "Id" in line and "GPU" in line)
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "Id", "Name", "Kind", "LLM", "RAG", "J", "Q", "EA", "RC", "AA", "C", "CV", "TC", "EO", "GPU"]


def test_the_needs_column_fits_at_80_columns_too(monkeypatch):
    from rich.console import Console

    from sonar_core.listings import print_evaluators
    from sonar_core.plugins import PluginManager

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",  # torch missing, as on a base install (tests/core/test_extras.py)
                        lambda name, *a, **k: None if name.split(".")[0] == "torch" else real(name, *a, **k))
    manager = PluginManager(autoload=True).load()
    console = Console(width=80, file=io.StringIO(), color_system=None)
    print_evaluators(manager, console)
    lines = console.file.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert _ids_in_full(lines) == BUILT_IN
    # Under the table, what is not installed, by what it needs (the same as --json's "needs").
    notes = " ".join(" ".join(lines).split())
    for requirement in ("sonar-eval[models]", "sonar-eval[ragas,models]"):
        ids = [eid for eid, cls in manager.evaluators.items() if cls.needs() == requirement]
        assert ids and f"Not installed, {requirement} needed: {', '.join(ids)}." in notes
    assert "perplexity" in [eid for eid, cls in manager.evaluators.items() if cls.needs() == "sonar-eval[models]"]
