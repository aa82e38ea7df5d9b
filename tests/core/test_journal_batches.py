"""The journal summarises scoring per batch and per evaluator, with no line per row."""

from __future__ import annotations

import json

import pytest

import sonar_core
from sonar_core import names

# toy_score scores a row with the number in its answer; threshold 0.5, higher is better.
ROWS = [
    {"test_case_key": "t1", "model_key": "m1", "input": "q", "actual_output": "0.9"},
    {"test_case_key": "t1", "model_key": "m2", "input": "q", "actual_output": "0.2"},
    {"test_case_key": "t2", "model_key": "m1", "input": "q", "actual_output": "0.4"},
    {"test_case_key": "t2", "model_key": "m2", "input": "q", "actual_output": "0.8"},
    {"test_case_key": "t3", "model_key": "m1", "input": "q", "actual_output": "0.1"},
]


@pytest.fixture
def events(tmp_path, monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    result = sonar_core.run(dataset=str(dataset), evaluators=["toy_score"], plugins=["toy_plugin"], batch_size=2,
                            output_dir=str(tmp_path), run_id="r")
    assert result.status == "success", result.message
    lines = (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_one_event_per_batch_with_its_summary(events):
    batches = [{k: v for k, v in e.items() if k not in ("timestamp", "class", "method", "seconds")}
               for e in events if e["message"] == "measured batch quality"]
    common = {"message": "measured batch quality", "evaluator": "toy_score", "total": 5, "metric": "score"}
    assert batches == [
        {**common, "batch": 1, "rows": 2, "done": 2, "mean": pytest.approx((0.9 + 0.2) / 2), "failing": 1},
        {**common, "batch": 2, "rows": 2, "done": 4, "mean": pytest.approx((0.4 + 0.8) / 2), "failing": 1},
        {**common, "batch": 3, "rows": 1, "done": 5, "mean": pytest.approx(0.1), "failing": 1},
    ]
    assert all(e["seconds"] >= 0 for e in events if e["message"] == "measured batch quality")


def test_evaluator_summary_event_and_no_row_lines(events):
    (scored,) = [e for e in events if e["message"] == "evaluator scored"]
    assert (scored["evaluator"], scored["rows"], scored["skipped_rows"], scored["metric"]) == ("toy_score", 5, 0, "score")
    assert scored["means"] == {"m1": pytest.approx((0.9 + 0.4 + 0.1) / 3), "m2": pytest.approx((0.2 + 0.8) / 2)}
    assert not [e for e in events if "test_case_key" in e or e["message"] == "measured item quality"]
