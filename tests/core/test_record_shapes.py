"""The JSON shapes declared once as TypedDicts (artifacts/record_shapes.py, artifacts/views.py) against the
files a real run writes: every key a file holds is declared, every required key is there, and so on down
every nested TypedDict. A key added to a writer without its declaration fails here."""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path

import pytest

from sonar_core import names
from sonar_core.dataset import DatasetSummary
from sonar_core.llm.ledger import CostsRecord
from sonar_core.artifacts import record_shapes as shapes
from sonar_core.artifacts.views import EvaluatorView

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from compare_runs import rows_a  # noqa: E402


def _mismatches(value: object, tp: object, where: str) -> list[str]:
    """Where ``value`` (read from a file) strays from the declared type ``tp``: keys undeclared or missing."""
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = typing.get_type_hints(tp)
        out = [f"{where}: {key} not declared" for key in value if key not in hints]
        out += [f"{where}: {key} missing" for key in sorted(tp.__required_keys__ - set(value))]
        for key, item in value.items():
            if key in hints:
                out += _mismatches(item, hints[key], f"{where}.{key}")
        return out
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union:
        if value is None and type(None) in args:
            return []
        shaped = [a for a in args if typing.is_typeddict(a) or typing.get_origin(a) in (dict, list)]
        return _mismatches(value, shaped[0], where) if len(shaped) == 1 else []
    if origin is dict and isinstance(value, dict):
        return [m for key, item in value.items() for m in _mismatches(item, args[1], f"{where}[{key}]")]
    if origin is list and isinstance(value, list):
        return [m for i, item in enumerate(value) for m in _mismatches(item, args[0], f"{where}[{i}]")]
    return []


def test_the_checker_sees_an_undeclared_and_a_missing_key():
    record = {"sonar": "1", "python": "3.11", "plugins": {"a": "1"}, "extra": 1}
    assert _mismatches(record, shapes.VersionsJson, "versions") == ["versions: extra not declared"]
    assert _mismatches({"sonar": "1", "plugins": {}}, shapes.VersionsJson, "versions") == ["versions: python missing"]
    row = {"rank": 1, "model": "m", "metrics": {}, "rows": 2, "total_time": None, "total_cost": None, "intervals": {
        "x": {"ci_low": 0.1, "ci_high": 0.2, "n": 3}}}
    assert _mismatches([row], list[shapes.BoardRowJson], "rows") == ["rows[0].intervals[x]: method missing"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    import sonar_core

    folder = tmp_path_factory.mktemp("shapes")
    dataset = folder / "rows.json"
    dataset.write_text(json.dumps(rows_a()), encoding="utf-8")
    result = sonar_core.run(dataset=str(dataset), evaluators=["text_matching", "bleu"],
                            output_dir=str(folder / "reports"), run_id="shapes")
    assert result.status == "success", result.message
    return Path(result.run_dir)


def test_run_json_holds_the_declared_shapes(run_dir):
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    sections = {"versions": shapes.VersionsJson, "timings": shapes.TimingsJson, "statistics": shapes.StatisticsJson,
                "services": shapes.ServicesJson, "llm": shapes.LlmJson, "costs": CostsRecord,
                "pipeline": shapes.PipelineJson}
    found = [m for key, tp in sections.items() if record.get(key) is not None
             for m in _mismatches(record[key], tp, key)]
    result = record["result"]
    found += _mismatches(result["dataset"], DatasetSummary, "dataset")
    found += _mismatches(result["executed_explainers"], list[shapes.ExecutedJson], "executed_explainers")
    found += _mismatches(result["problems"], list[shapes.ProblemJson], "problems")
    found += _mismatches(result["insights"], list[shapes.InsightJson], "insights")
    assert found == []
    assert result["problems"] and result["insights"] and len(result["executed_explainers"]) == 2


def test_each_evaluator_summary_holds_the_declared_view_and_drilldown_rows(run_dir):
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    found = []
    for entry in record["result"]["executed_explainers"]:
        summary = json.loads((run_dir / entry["job_location"] / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
        found += _mismatches(summary["view"], EvaluatorView, f"{entry['name']}.view")
        found += _mismatches(summary["test_cases"], shapes.DrilldownRowsJson, f"{entry['name']}.test_cases")
        problems = run_dir / entry["job_location"] / names.PROBLEMS_DIR / names.PROBLEMS_FILE
        found += _mismatches(json.loads(problems.read_text(encoding="utf-8")), list[shapes.ProblemJson], "problems")
    assert found == []


# A finding and the JSON shape an artifact writes it as are declared apart (findings/ holds no file format);
# adding a field to one and not the other must fail here, not in a reader's hands.
def _mirrors():
    from sonar_core.artifacts import comparison_json as cj, views
    from sonar_core.findings import comparison_types as ct, types as ft
    from sonar_core.llm import calibration
    return [(ct.SideMean, cj.SideJson), (ct.PairedComparison, cj.TestJson), (ct.Flips, cj.FlipsJson),
            (ct.MetricComparison, cj.MetricJson), (ct.EvaluatorComparison, cj.EvaluatorJson),
            (ct.OneRunOnly, cj.OneRunOnlyJson), (ct.RunRef, cj.RunRefJson), (ct.PartialRun, cj.PartialJson),
            (calibration.CalibrationResult, calibration.CalibrationRecord), (ft.PairwiseTest, shapes.PairJson),
            (ft.TradeoffRow, views.TradeoffRowView)]


@pytest.mark.parametrize("record, shape", _mirrors(), ids=lambda tp: tp.__name__)
def test_a_findings_record_and_its_json_shape_name_the_same_fields(record, shape):
    import dataclasses
    assert {f.name for f in dataclasses.fields(record)} == shape.__required_keys__ | shape.__optional_keys__
