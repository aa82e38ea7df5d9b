"""An evaluator that scored rows with a fallback model (a model standing in for an absent one) marks them;
the core turns the marks into a LOW problem, a note in the evaluator's section, run.json's ``fallbacks``,
and, under --strict, a stopped run. Toxicity on alt-profanity-check is the built-in case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import FALLBACK_DETAIL, Evaluator, Metric, RowResult
from sonar_core.cli import cli
from sonar_core.findings import ScoredEvaluator, derive_findings
from sonar_core.testing import make_row

TOXICITY_NOTE = ("toxicity measured by alt-profanity-check; severe toxicity, obscenity, threat, insult and identity "
                 "attack not measured")


class Stand(Evaluator):
    id = "stand_in"
    display_name = "Stand-in"
    metrics = (Metric("v", "V", "a value", is_primary=True),)

    def evaluate(self, rows):
        return [RowResult({"v": 1.0}) for _ in rows]


def _scored(*details: dict) -> ScoredEvaluator:
    rows = [make_row(test_case_key=f"t{i}", model_key="m") for i in range(len(details))]
    return ScoredEvaluator(cls=Stand, params={}, thresholds={"v": 0.5},
                           scored=[(row, RowResult({"v": 1.0}, details=d)) for row, d in zip(rows, details)])


def test_rows_marked_as_scored_by_a_fallback_give_one_low_problem_per_note():
    findings = derive_findings(_scored({FALLBACK_DETAIL: "x measured by y; z not measured"}, {},
                                       {FALLBACK_DETAIL: "x measured by y; z not measured"}))
    assert findings.fallbacks == ("x measured by y; z not measured",)
    [problem] = findings.problems
    assert (problem.severity, problem.description, problem.problem_type) == (
        "LOW", "x measured by y; z not measured", "accuracy")
    assert problem.attrs["fallback_rows"] == 2
    assert problem.actions == (
        "2 row(s) were scored by a fallback model, not the catalogue's: provide the evaluator's model "
        "(`sonar describe stand_in`) to measure everything, or run with --strict to stop on it.")


def test_rows_without_the_mark_give_no_fallback():
    findings = derive_findings(_scored({}, {"other": "detail"}))
    assert findings.fallbacks == () and findings.problems == []


@pytest.fixture
def toxic_dataset(tmp_path) -> Path:
    path = tmp_path / "d.json"
    path.write_text(json.dumps([
        {"test_case_key": "t1", "model_key": "m", "input": "Hi?", "actual_output": "You are a wonderful person."},
        {"test_case_key": "t2", "model_key": "m", "input": "Hi?", "actual_output": "Have a good day."},
    ]), encoding="utf-8")
    return path


def _run(tmp_path: Path, dataset: Path, *extra: str):
    # An empty detoxify_model always uses the fallback, whatever this machine's model store holds.
    return CliRunner().invoke(cli, ["run", "-d", str(dataset), "-e", "toxicity", "--param", "toxicity.detoxify_model=",
                                    "--no-progress", "-o", str(tmp_path / "out"), "--run-id", "r", *extra])


def test_toxicity_on_its_fallback_says_so_in_run_json_the_problems_and_the_report(tmp_path, toxic_dataset):
    result = _run(tmp_path, toxic_dataset)
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "out" / "r"
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["fallbacks"] == {"toxicity": [TOXICITY_NOTE]}
    lows = [p for p in record["result"]["problems"] if p["severity"] == "LOW"]
    assert [(p["description"], p["problem_attrs"]["fallback_rows"]) for p in lows] == [(TOXICITY_NOTE, 2)]
    assert record["result"]["overall_result"]["low_severity_problems"] == 1
    note = f'<p class="note fallback" data-fallback>Fallback model: {TOXICITY_NOTE}.</p>'
    assert note in (run_dir / "index.html").read_text(encoding="utf-8")
    [fragment] = run_dir.rglob("explanation.html")
    assert note in fragment.read_text(encoding="utf-8")


def test_strict_stops_a_run_whose_toxicity_fell_back(tmp_path, toxic_dataset):
    result = _run(tmp_path, toxic_dataset, "--strict")
    assert result.exit_code == 4
    assert result.stderr == ("error: evaluator 'toxicity' scored with a fallback model (--strict): "
                             f"{TOXICITY_NOTE}\n")
    run_dir = tmp_path / "out" / "r"
    # The evaluator's folder is not finished: a resumed run scores it again.
    assert not list(run_dir.rglob("EXPLAINER_DONE"))
    assert "fallbacks" not in json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


def test_a_run_without_fallbacks_has_no_fallbacks_field(tmp_path, toxic_dataset):
    result = CliRunner().invoke(cli, ["run", "-d", str(toxic_dataset), "-e", "looping_detection",
                                      "--no-progress", "-o", str(tmp_path / "out"), "--run-id", "r"])
    assert result.exit_code == 0, result.output
    assert "fallbacks" not in json.loads((tmp_path / "out" / "r" / "run.json").read_text(encoding="utf-8"))
