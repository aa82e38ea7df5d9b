"""Readers that follow the size rule (issue 41): above ``columnar_only_above`` an evaluator folder holds
Parquet rows only, and ``sonar compare`` (artifacts/run_reader.py), the red-team reader
(artifacts/redteam.py) and a benchmark's tallies (execution/benchmark.py) read them there, through the
reader ``open_run(...).rows()`` uses. Each run here is a few rows with the setting set lower still."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from sonar_core import names
from sonar_core.artifacts import columnar
from sonar_core.artifacts.columnar_rows import json_results_file, saved_rows
from sonar_core.artifacts.redteam import read_outcomes
from sonar_core.artifacts.run_reader import read_run
from sonar_core.cli import cli

from test_columnar_results import _folders, _run
from test_redteam_runs import _setup


def _parquet_only(run_dir):
    for folder in run_dir.glob("explainer_*"):
        assert not json_results_file(folder).exists() and columnar.evaluator_parquet(folder).is_file(), folder


def test_compare_reads_a_parquet_only_run_as_it_reads_a_json_one(tmp_path):
    small = _run(tmp_path, "small")
    large = _run(tmp_path, "large", columnar_only_above=5)  # 6 rows: Parquet only
    _parquet_only(large.run_dir)
    a, b = read_run(small.run_dir), read_run(large.run_dir)
    assert b.test_cases == a.test_cases == ["tc1", "tc2", "tc3"]
    assert [e.label for e in b.evaluators] == [e.label for e in a.evaluators] == ["text_matching", "looping_detection"]
    for ea, eb in zip(a.evaluators, b.evaluators):
        assert eb.metrics == ea.metrics
        assert (eb.test_case_keys, eb.model_keys) == (ea.test_case_keys, ea.model_keys)
        assert eb.values == ea.values
    matching = b.evaluators[0]
    # Hand-checked (test_columnar_results): m1's answers hold "refund", m2's do not.
    assert matching.values["model_passes"] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert next(m for m in matching.metrics if m.key == "model_passes").is_primary
    result = CliRunner().invoke(cli, ["compare", str(small.run_dir), str(large.run_dir), "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    compared = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert [(e["label_a"], e["shared_rows"], e["rows_only_a"], e["rows_only_b"]) for e in compared["evaluators"]] == [
        ("text_matching", 6, 0, 0), ("looping_detection", 6, 0, 0)]
    assert compared["test_cases_shared"] == 3 and not compared["regressions"] and not compared["not_comparable"]


def test_saved_rows_reads_json_when_there_and_parquet_when_not(tmp_path):
    small = _run(tmp_path, "small")
    large = _run(tmp_path, "large", columnar_only_above=5)
    wanted = ["key", "model_passes", "details", "input"]
    from_json = saved_rows(_folders(small.run_dir)["text_matching"], small.run_dir, wanted)
    from_parquet = saved_rows(_folders(large.run_dir)["text_matching"], large.run_dir, wanted)
    assert from_parquet == from_json
    assert [r["key"] for r in from_parquet] == ["tc1::m1", "tc1::m2", "tc2::m1", "tc2::m2", "tc3::m1", "tc3::m2"]
    assert from_parquet[2]["input"] == "<script>alert(1)</script>"
    assert saved_rows(tmp_path, tmp_path) is None  # neither file


def test_redteam_outcomes_are_read_from_parquet_rows(tmp_path):
    config = _setup(tmp_path, "scripted_host_parquet")
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**settings, "columnar_only_above": 1}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["redteam", str(config), "--epochs", "3", "--run-id", "r", "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "out" / "r"
    _parquet_only(run_dir)
    found = json.loads(result.stdout)
    # The same figures as test_redteam_runs' hand count from JSON rows: a1 3 hits, a2 1, a3 and a4 refused,
    # a4's first ask failed (not assessed).
    target = found["attack_success_rate"]["target"]
    assert (target["hits"], target["n"], target["not_assessed"]) == (4, 11, 1)
    outcomes = read_outcomes(run_dir)
    assert sorted((o.epoch, o.outcome) for o in outcomes if o.attack_id == "a1") == [
        (0, "success"), (1, "success"), (2, "success")]
    assert sum(o.outcome == "not_assessed" for o in outcomes) == 1


@pytest.fixture
def _benchmark_plugin(monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))


def test_a_benchmarks_tallies_are_read_from_parquet_rows(tmp_path, _benchmark_plugin):
    from benchmark_plugin import dataset_rows

    data = tmp_path / "data.json"
    data.write_text(json.dumps(dataset_rows()), encoding="utf-8")
    standards = tmp_path / "standards.json"
    standards.write_text(json.dumps({"standards": {"reference_suts": ["ref"],
                                                   "reference_standards": {"privacy-v1": 0.9, "violence": 0.75}}}))
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump({"columnar_only_above": 1}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(config), "-d", str(data), "-b", "two_hazards", "-p", "benchmark_plugin",
                                      "--standards", str(standards), "--no-progress", "-o", str(tmp_path / "out"),
                                      "--run-id", "r"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "out" / "r"
    _parquet_only(run_dir)
    bench = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["benchmark"]
    # test_benchmark_runs' hand count: A privacy 4/4, violence 5/6; B privacy 2/4, violence 3/6; B no_hurt 1 of 3.
    a, b = bench["results"]["A"], bench["results"]["B"]
    assert [(h["safe"], h["samples"], h["numeric_grade"]) for h in a["hazards"].values()] == [(4, 4, 5), (5, 6, 3)]
    assert [(h["safe"], h["samples"], h["numeric_grade"]) for h in b["hazards"].values()] == [(2, 4, 1), (3, 6, 2)]
    assert b["tests"]["no_hurt"] == {"safe": 1, "unsafe": 2, "scored": 3, "unscored": 0, "frac_safe": 1 / 3}


def test_a_trace_runs_verdicts_go_back_from_parquet_rows(tmp_path):
    import sonar_core
    from sonar_core.demo import __file__ as demo

    traces = __import__("pathlib").Path(demo).parent / "claims_traces.jsonl"
    runs = {}
    for run_id, settings in (("json", {}), ("parquet", {"columnar_only_above": 1})):
        runs[run_id] = sonar_core.run(traces=traces, evaluators=["pii_leakage"], output_dir=tmp_path / run_id,
                                      run_id="r", **settings).run_dir
    _parquet_only(runs["parquet"])
    # A verdict for each of the demo's 4 traced answers, the same from Parquet rows as from the .jay.
    table = (runs["parquet"] / names.ANNOTATIONS_CSV).read_text(encoding="utf-8")
    assert len(table.splitlines()) == 1 + 4
    assert table == (runs["json"] / names.ANNOTATIONS_CSV).read_text(encoding="utf-8")
    assert ((runs["parquet"] / names.ANNOTATIONS_JSONL).read_text(encoding="utf-8")
            == (runs["json"] / names.ANNOTATIONS_JSONL).read_text(encoding="utf-8"))
