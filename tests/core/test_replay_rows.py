"""A pack replays the rows its own run recorded (issue 35: the quickstart's pack replayed with
``answer_semantic_similarity`` values 1e-8 apart).

A local model's value for a row depends by a few units in the last place on the texts it was batched
with (padding changes the shapes of the sums), so two runs that score the same row record slightly different
values. The recorded rows were keyed by the row alone, so a later run's record replaced an earlier one's and
the earlier run's pack replayed the later values. They are keyed by the run's job now. Here run B's vectors
are made to differ on purpose (far more than batching does, so the test does not hang on the batch sizes).
"""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from sonar_core.models import embeddings

EVALUATORS = [{"id": "answer_semantic_similarity", "categories": ["rag", "summarization"], "max_rows": 6}]


def test_a_pack_replays_its_own_runs_rows_after_another_run_scored_them(tmp_path, monkeypatch):
    cache = tmp_path / "cache.sqlite"
    # Run A, with no run id: the run records the one it took (run.json's parameters and the pack's).
    a = sonar_core.run(dataset="demo", evaluators=EVALUATORS, llm_cache=str(cache), output_dir=str(tmp_path / "out"))
    assert a.status == "success", a.message
    recorded = json.loads((a.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert recorded["interpretation_parameters"]["run_id"] == a.run_dir.name

    real = embeddings.EmbeddingService._encode
    monkeypatch.setattr(embeddings.EmbeddingService, "_encode", lambda self, model, texts: real(self, model, texts) * 0.99)
    embeddings._PROCESS_CACHE.clear()
    b = sonar_core.run(dataset="demo", evaluators=EVALUATORS, llm_cache=str(cache), output_dir=str(tmp_path / "out"),
                       run_id="b")
    assert b.status == "success", b.message
    monkeypatch.undo()
    embeddings._PROCESS_CACHE.clear()
    with sqlite3.connect(cache) as db:
        (rows,) = db.execute("SELECT COUNT(*) FROM row_results").fetchone()
    assert rows == 2 * 6  # each run's own record of its 6 rows

    pack = tmp_path / "a.zip"
    assert CliRunner().invoke(cli, ["pack", str(a.run_dir), "-o", str(pack)]).exit_code == 0
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "empty-home"))
    outcome = CliRunner().invoke(cli, ["replay", str(pack), "-o", str(tmp_path / "replay")])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stdout.endswith("every file identical to the pack apart from timestamps, durations, paths and how "
                                   "answers were obtained\n")
