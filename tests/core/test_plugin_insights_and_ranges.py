"""Two contract additions, end to end through a run: an evaluator's own insights
(``extra_insights``) and metrics with an unbounded range (counts on [0, inf])."""

from __future__ import annotations

import json
import math
import textwrap

import pytest

from sonar_core import names
from sonar_core.config import build_config
from sonar_core.contract import Metric
from sonar_core.plugins import PluginManager
from sonar_core.findings.problems import threshold_severity
from sonar_core.execution import execute_run

PLUGIN = '''
from sonar_core import Evaluator, Input, Metric, RowResult, hookimpl


class Own(Evaluator):
    id = "own_insight"
    display_name = "Own insight"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (
        Metric("v", "V", "The number in the answer.", is_primary=True, threshold=0.5),
        Metric("count", "Count", "Words in the answer.", value_range=(0.0, float("inf")),
               higher_is_better=False, threshold=1.0),
    )

    def evaluate(self, rows):
        return [RowResult({"v": float(r.actual_output.split()[0]), "count": float(len(r.actual_output.split()))})
                for r in rows]

    def extra_insights(self, scored, thresholds):
        low = [row.test_case_key for row, result in scored if result.values["v"] < thresholds["v"]]
        if any("BROKEN" in row.actual_output for row, _ in scored):
            return [{"description": "no type"}]
        return [{"insight_type": "weak-point", "description": f"below {thresholds['v']}: {', '.join(low)}",
                 "actions_description": "look", "insight_attrs": {"cases": low}}]


@hookimpl
def register_evaluators(register):
    register(Own)
'''


@pytest.fixture
def own_plugins(tmp_path, monkeypatch) -> PluginManager:
    (tmp_path / "own_insight_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return PluginManager(extra_modules=["own_insight_plugin"], autoload=False).load()


def _run(tmp_path, plugins, answers: dict[str, str], **config):
    dataset = tmp_path / "data.json"
    dataset.write_text(json.dumps([{"test_case_key": case, "model_key": "m", "input": "q", "actual_output": answer}
                                   for case, answer in answers.items()]), encoding="utf-8")
    result = execute_run(build_config({"dataset": str(dataset), "evaluators": ["own_insight"],
                                       "output_dir": str(tmp_path / "out"), "run_id": "r", **config}), plugins=plugins)
    folder = next(result.run_dir.glob("explainer_*"))
    return result, folder


def test_extra_insights_get_the_thresholds_in_force_and_the_core_keys(tmp_path, own_plugins):
    # The configured threshold 0.7 (not the declared 0.5) reaches the hook: t1 (0.3) and t2 (0.6) are below it.
    result, folder = _run(tmp_path, own_plugins, {"t1": "0.3 a", "t2": "0.6 a", "t3": "0.9 a"}, thresholds={"v": 0.7})
    assert result.status == "success", result.message
    insights = json.loads((folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE).read_text(encoding="utf-8"))
    own = insights[-1]
    assert own["description"] == "below 0.7: t1, t2"
    assert own["insight_type"] == "weak-point" and own["insight_attrs"] == {"cases": ["t1", "t2"]}
    assert own["actions_description"] == "look"
    assert own["evaluator_id"] == "own_insight" and own["explainer_name"] == "Own insight"
    assert own["schema_version"] == "1.0" and own["description_html"] == "below 0.7: t1, t2"
    # The standard insights come first; the run record lists the evaluator's own one too.
    assert [i["insight_type"] for i in insights[:-1]] == ["weak-point"]
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["result"]["insights"][-1]["description"] == "below 0.7: t1, t2"


def test_an_insight_without_a_type_fails_the_evaluator(tmp_path, own_plugins):
    result, folder = _run(tmp_path, own_plugins, {"t1": "0.3 a", "t2": "0.4 BROKEN"})
    assert result.status == "failed"
    error = "ValueError: own_insight.extra_insights() returned an insight without a description or an insight_type"
    assert result.failed == [{"evaluator": "own_insight", "error": error}]
    assert (folder / names.FAILED_MARKER).is_file()


def test_unbounded_range_is_null_in_json_infinite_in_html_and_has_a_severity(tmp_path, own_plugins):
    # count: t1 has 4 words, t2 has 1: mean 2.5 > threshold 1.0, HIGH from twice the threshold (2.0).
    result, folder = _run(tmp_path, own_plugins, {"t1": "0.9 a b c", "t2": "0.9"})
    assert result.status == "success", result.message
    descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text(encoding="utf-8"))
    meta = {m["key"]: m for m in descriptor["metrics_meta"]}
    assert meta["count"]["value_range"] == [0.0, None] and meta["v"]["value_range"] == [0.0, 1.0]
    html = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text(encoding="utf-8")
    assert "0.0 – ∞" in html
    [problem] = json.loads((folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE).read_text(encoding="utf-8"))
    assert problem["problem_attrs"]["metric_id"] == "count" and problem["problem_attrs"]["metric_score"] == 2.5
    assert problem["severity"] == "HIGH"


def test_severity_on_an_unbounded_range_starts_at_twice_the_threshold():
    count = Metric("c", "C", "", value_range=(0.0, math.inf), higher_is_better=False, threshold=0.75)
    # The worse end is taken as 0.75 + 2 x (0.75 - 0) = 2.25, so HIGH from 0.75 + (2.25 - 0.75) / 2 = 1.5.
    assert threshold_severity(count, 1.5, 0.75) == "HIGH"
    assert threshold_severity(count, 1.49, 0.75) == "MEDIUM"
    shifted = Metric("s", "S", "", value_range=(1.0, math.inf), higher_is_better=False, threshold=3.0)
    assert threshold_severity(shifted, 5.0, 3.0) == "HIGH"  # 3 + (3 - 1) = 5
    assert threshold_severity(shifted, 4.9, 3.0) == "MEDIUM"
    gain = Metric("g", "G", "", value_range=(-math.inf, 1.0), threshold=0.5)
    assert threshold_severity(gain, 0.0, 0.5) == "HIGH"  # mirrored: 0.5 - (1 - 0.5) = 0
    assert threshold_severity(gain, 0.01, 0.5) == "MEDIUM"
    assert count.json_range() == [0.0, None] and gain.json_range() == [None, 1.0]
