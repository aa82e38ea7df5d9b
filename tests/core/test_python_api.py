"""The analyst's Python API: the typed signature of sonar_core.run, open_run's tables against the
folder's JSON artifacts (pandas and datatable), the Jupyter rendering, and docs/python-api.md's
example executed as a script."""

from __future__ import annotations

import inspect
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from sonar_core.config import RunConfig
from sonar_core.errors import ConfigError
from sonar_core.results import RecordList, RunResult, open_run

from conftest import REPO

EVALUATORS = ["text_matching", "rouge", {"id": "factual_knowledge", "name": "fk_and",
                                          "params": {"target_output_delimiter": "<AND>", "logical_operator": "AND"}}]


def test_run_signature_is_the_configuration():
    parameters = inspect.signature(sonar_core.run).parameters
    settings = set(parameters) - {"config", "progress"}
    assert settings == set(RunConfig.model_fields)
    assert all(parameters[s].kind is inspect.Parameter.KEYWORD_ONLY for s in settings)
    assert all(parameters[s].annotation != inspect.Parameter.empty for s in parameters)
    doc = inspect.getdoc(sonar_core.run)
    assert all(f"\n        {s}: " in sonar_core.run.__doc__ for s in settings), doc


def test_unknown_setting_has_the_cli_message(tmp_path):
    with pytest.raises(ConfigError) as raised:
        sonar_core.run(dataset="demo", evaluatorz=["rouge"], output_dir=str(tmp_path))
    assert str(raised.value) == "<command line>: unknown configuration key 'evaluatorz' (did you mean 'evaluators'?)"
    config = tmp_path / "c.yaml"
    config.write_text("dataset: demo\nevaluatorz: [rouge]\n", encoding="utf-8")
    cli_run = CliRunner().invoke(cli, ["run", str(config)])
    assert cli_run.stderr == f"error: {config}: unknown configuration key 'evaluatorz' (did you mean 'evaluators'?)\n"
    assert not list(tmp_path.glob("run-*"))


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    return sonar_core.run(dataset="demo", evaluators=EVALUATORS, output_dir=out, run_id="r",
                          thresholds={"rouge_l": 0.5})


def _same(a, b) -> bool:
    missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return a == b


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _folders(run_dir: Path) -> dict[str, Path]:
    record = _json(run_dir / names.RUN_JSON)
    return {e["name"]: run_dir / e["job_location"] for e in record["result"]["executed_explainers"]}


def _check_tables(result: RunResult, records) -> None:
    """Every table of ``result`` against the JSON files, ``records`` turning a frame into dicts."""
    folders = _folders(result.run_dir)
    assert list(folders) == ["text_matching", "rouge", "fk_and"]
    everything = records(result.rows())
    offset = 0
    for label, folder in folders.items():
        saved = _json(folder / names.EVAL_RESULTS / "application_json" / "explanation.json")["results"]
        rows = records(result.rows(label))
        assert len(rows) == len(saved) > 0
        for row, expected in zip(rows, saved):
            assert row["evaluator"] == label
            assert all(_same(row[key], value) for key, value in expected.items() if not isinstance(value, (list, dict)))
        assert [r["key"] for r in everything[offset:offset + len(saved)]] == [r["key"] for r in saved]
        offset += len(saved)
        board_dir = next(folder / b / "application_json" for b in (names.HEATMAP_LEADERBOARD, names.BOOL_LEADERBOARD)
                         if (folder / b).is_dir())
        board = _json(board_dir / _json(board_dir / "explanation.json")["files"]["ALL_METRICS"])
        table = records(result.leaderboard(label))
        assert [r["model"] for r in table] == board["ranking"]
        for r in table:
            assert r["rank"] == board["models"][r["model"]]["rank"]
            assert all(_same(r[k], v) for k, v in board["data"][r["model"]].items())
            assert r["rows"] == board["models"][r["model"]]["rows"]
    assert offset == len(everything)
    expected_problems = [p for f in folders.values() for p in _json(f / names.PROBLEMS_DIR / names.PROBLEMS_FILE)]
    problems = records(result.problems())
    assert [p["description"] for p in problems] == [p["description"] for p in expected_problems]
    assert [p["severity"] for p in problems] == [p["severity"] for p in expected_problems]
    insights = records(result.insights())
    assert [i["description"] for i in insights] == [
        i["description"] for i in _json(result.run_dir / names.RUN_JSON)["result"]["insights"]]


def test_tables_equal_the_json_artifacts_with_pandas(demo_run):
    pandas = pytest.importorskip("pandas")
    assert isinstance(demo_run.rows(), pandas.DataFrame)
    _check_tables(demo_run, lambda df: df.to_dict("records"))
    opened = open_run(demo_run.run_dir)
    _check_tables(opened, lambda df: df.to_dict("records"))
    assert (opened.status, opened.exit_code, opened.problems, opened.skipped) == (
        demo_run.status, demo_run.exit_code, demo_run.problems, demo_run.skipped)
    assert opened.rows().equals(demo_run.rows())


def test_tables_are_datatable_frames_without_pandas(demo_run, monkeypatch):
    import datatable as dt

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    rows = demo_run.rows("rouge")
    assert isinstance(rows, dt.Frame)

    def records(frame):
        columns = frame.to_dict()
        return [{name: values[i] for name, values in columns.items()} for i in range(frame.nrows)]

    _check_tables(open_run(demo_run.run_dir), records)


def test_an_older_folder_without_the_evaluator_list(demo_run, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(demo_run.run_dir, old)
    record = _json(old / names.RUN_JSON)
    del record["result"]["executed_explainers"]  # older run.json: the folders are found on disk
    (old / names.RUN_JSON).write_text(json.dumps(record), encoding="utf-8")
    opened = open_run(old)
    # Found by folder name order; labelled by the descriptor's key (the evaluator id).
    assert sorted(opened.rows()["evaluator"].unique()) == ["factual_knowledge", "rouge", "text_matching"]
    assert opened.leaderboard("rouge").equals(demo_run.leaderboard("rouge"))


def test_unknown_evaluator_and_folder(demo_run, tmp_path):
    with pytest.raises(ConfigError) as raised:
        demo_run.leaderboard("bleu")
    assert str(raised.value) == f"no evaluator 'bleu' in {demo_run.run_dir} (evaluators: text_matching, rouge, fk_and)"
    with pytest.raises(ConfigError) as raised:
        open_run(tmp_path)
    assert str(raised.value) == f"{tmp_path}: not a Sonar run folder (no run.json)"


def test_problems_stay_a_list_and_are_a_table(demo_run):
    assert isinstance(demo_run.problems, list) and isinstance(demo_run.problems, RecordList)
    assert demo_run.problems == _json(demo_run.run_dir / names.RUN_JSON)["result"]["problems"]
    assert len(demo_run.problems()) == len(demo_run.problems)


def test_repr_html_shows_status_leaderboards_problems_and_escapes(demo_run, tmp_path):
    page = demo_run._repr_html_()
    assert "<b>success</b> (exit code 0)" in page
    assert "<tr><td>rouge</td><td>rouge_l</td><td>acme-gpt-large (0.6346)</td></tr>" in page
    assert f"<p><b>{len(demo_run.problems)} problem(s)</b></p>" in page
    assert f"<li>&hellip; and {len(demo_run.problems) - 10} more</li>" in page
    hostile = RunResult(run_dir=tmp_path, status="failed", exit_code=1, message="<script>x</script>",
                        problems=[{"severity": "HIGH", "description": "<img src=x onerror=alert(1)>"}],
                        skipped=[{"evaluator": "<b>", "reason": "a & b"}])
    page = hostile._repr_html_()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "[HIGH] &lt;img src=x onerror=alert(1)&gt;" in page
    assert "skipped &lt;b&gt;: a &amp; b" in page


def test_the_documented_example_runs(tmp_path):
    text = (REPO / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = [part.split("```", 1)[0] for part in text.split("```python")[1:]]
    assert len(blocks) == 1
    script = tmp_path / "example.py"
    script.write_text(blocks[0], encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("success 0 ")
    assert len(list((tmp_path / "reports").iterdir())) == 1
