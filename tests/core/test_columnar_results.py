"""Row results as Parquet (issue 41 item 1): above ``columnar_only_above`` rows only Parquet is written,
the dataset copy is stored once per run, and ``open_run(...).rows()`` reads the same rows either way."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sonar_core
from sonar_core import names
from sonar_core.artifacts import columnar

EVALUATORS = ["text_matching", "looping_detection"]
# 3 test cases x 2 models = 6 rows; text_matching passes a row whose answer holds "refund".
ROWS = [
    {"test_case_key": "tc1", "model_key": "m1", "input": "Where is my refund?", "expected_output": "on its way",
     "actual_output": "Your refund is on its way.", "output_condition": '"refund"',
     "context": ["Refunds take 5 days."], "categories": ["billing"], "actual_duration": 1.5, "cost": 0.002},
    {"test_case_key": "tc1", "model_key": "m2", "input": "Where is my refund?", "expected_output": "on its way",
     "actual_output": "No idea.", "output_condition": '"refund"',
     "context": ["Refunds take 5 days."], "categories": ["billing"], "actual_duration": 0.5, "cost": 0.001},
    {"test_case_key": "tc2", "model_key": "m1", "input": "<script>alert(1)</script>", "expected_output": "=1+1",
     "actual_output": "A refund, a refund, a refund.", "output_condition": '"refund"',
     "context": [], "categories": [], "actual_duration": 2.0, "cost": 0.003},
    {"test_case_key": "tc2", "model_key": "m2", "input": "<script>alert(1)</script>", "expected_output": "=1+1",
     "actual_output": "Ünïcode answer without the word.", "output_condition": '"refund"',
     "context": [], "categories": ["x", "y"], "actual_duration": 1.0, "cost": 0.001},
    {"test_case_key": "tc3", "model_key": "m1", "input": "Shipping?", "expected_output": "3 days",
     "actual_output": "refund policy applies", "output_condition": '"refund"',
     "context": ["a", "b"], "categories": [], "actual_duration": 0.25, "cost": 0.0},
    {"test_case_key": "tc3", "model_key": "m2", "input": "Shipping?", "expected_output": "3 days",
     "actual_output": "3 days", "output_condition": '"refund"',
     "context": ["a", "b"], "categories": [], "actual_duration": 0.75, "cost": 0.0},
]


def _run(tmp_path, run_id, **settings):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    result = sonar_core.run({"dataset": str(data), "evaluators": EVALUATORS, "output_dir": str(tmp_path / "out"),
                             "run_id": run_id, **settings})
    assert result.status == "success", result.message
    return result


def _folders(run_dir):
    return {json.loads((f / names.RESULT_DESCRIPTOR).read_text())["key"]: f for f in run_dir.glob("explainer_*")}


def _formats_dir(folder, mime):
    return folder / names.EVAL_RESULTS / names.mime_dir(mime)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_above_the_setting_only_parquet_is_written_and_rows_read_the_same(tmp_path):
    small = _run(tmp_path, "small")  # default setting (50,000): JSON, CSV, .jay and Parquet
    large = _run(tmp_path, "large", columnar_only_above=5)  # 6 rows > 5: Parquet only
    for key, folder in _folders(small.run_dir).items():
        for mime in (names.MIME_JSON, names.MIME_CSV, names.MIME_JAY, columnar.MIME_PARQUET):
            assert _formats_dir(folder, mime).is_dir(), (key, mime)
    for key, folder in _folders(large.run_dir).items():
        assert sorted(p.name for p in (folder / names.EVAL_RESULTS).iterdir()) == [
            "application_vnd_apache_parquet", "application_vnd_apache_parquet.meta"], key
        descriptor = json.loads((folder / names.RESULT_DESCRIPTOR).read_text())
        entry = next(e for e in descriptor["explanations"] if e["explanation_type"] == "global-llm-eval-results")
        assert entry["formats"] == ["application/vnd.apache.parquet"]
        meta = json.loads((folder / names.EVAL_RESULTS / "application_vnd_apache_parquet.meta").read_text())
        assert meta["mime"] == "application/vnd.apache.parquet" and meta["files"] == ["explanation.parquet"]
        # Summaries, leaderboards, problems and insights stay JSON.
        assert (folder / names.EVALUATOR_SUMMARY).is_file()
        assert (folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE).is_file()
        assert (folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE).is_file()
        assert any((folder / board / "application_json" / "explanation.json").is_file()
                   for board in (names.BOOL_LEADERBOARD, names.HEATMAP_LEADERBOARD))

    rows_small = small.rows()
    rows_large = sonar_core.open_run(large.run_dir).rows()
    assert list(rows_large.columns) == list(rows_small.columns)
    assert rows_large.shape == rows_small.shape == (12, len(rows_small.columns))
    for column in rows_small.columns:
        for a, b in zip(rows_small[column].tolist(), rows_large[column].tolist()):
            assert _same(a, b), (column, a, b)

    matching = sonar_core.open_run(large.run_dir).rows("text_matching")
    # Hand-checked: the answers holding "refund" are rows 1, 3 and 5 (tc1/m1, tc2/m1, tc3/m1).
    assert matching["key"].tolist() == ["tc1::m1", "tc1::m2", "tc2::m1", "tc2::m2", "tc3::m1", "tc3::m2"]
    assert matching["model_passes"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert matching["model_failures"].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert matching["context"].tolist() == [["Refunds take 5 days."], ["Refunds take 5 days."], [], [], ["a", "b"], ["a", "b"]]
    assert matching["categories"].tolist()[3] == ["x", "y"]
    assert matching["input"].tolist()[2] == "<script>alert(1)</script>"

    # Only the columns asked for, in that order, the same from Parquet and from JSON.
    for run in (small, sonar_core.open_run(large.run_dir)):
        picked = run.rows("text_matching", columns=["model_passes", "key", "context"])
        assert list(picked.columns) == ["evaluator", "model_passes", "key", "context"]
        assert picked["key"].tolist() == matching["key"].tolist()
        assert picked["model_passes"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
        assert picked["context"].tolist()[4] == ["a", "b"]
        with pytest.raises(sonar_core.ConfigError) as refused:
            run.rows("text_matching", columns=["key", "nope"])
        assert "no column 'nope' in the rows of explainer_" in str(refused.value)
    assert matching["actual_output"].tolist()[3] == "Ünïcode answer without the word."
    assert matching["actual_duration"].tolist() == [1.5, 0.5, 2.0, 1.0, 0.25, 0.75]
    assert matching["details"].tolist() == rows_small[rows_small["evaluator"] == "text_matching"]["details"].tolist()


def test_the_dataset_is_stored_once_per_run_and_the_files_are_zstd_parquet(tmp_path):
    large = _run(tmp_path, "large", columnar_only_above=5)
    dataset = large.run_dir / "dataset" / "llm_dataset.parquet"
    table = pq.read_table(dataset)
    assert table.num_rows == 6
    assert table.column("input").to_pylist()[0] == "Where is my refund?"
    assert table.schema.field("context").type == pa.list_(pa.string())
    assert table.schema.field("actual_duration").type == pa.float64()
    files = sorted(large.run_dir.rglob("*.parquet"))
    assert len(files) == 3  # the dataset, once, and one per evaluator
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        for group in range(metadata.num_row_groups):
            for column in range(metadata.num_columns):
                assert metadata.row_group(group).column(column).compression == "ZSTD", (path, column)
    matching = pq.read_table(columnar.evaluator_parquet(_folders(large.run_dir)["text_matching"]))
    # Keys, metric values and per-row messages; the dataset's text stays in the run's one copy.
    assert matching.schema.names == ["key", "test_case_key", "model_key", "model_passes", "model_failures",
                                     "model_retrieval_failures", "model_generation_failures", "model_parse_failures",
                                     "result_error_message", "details", "actual_output_meta"]
    assert matching.schema.field("model_passes").type == pa.float64()
    assert matching.column("model_passes").to_pylist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert matching.schema.metadata[b"sonar.evaluator_id"] == b"text_matching"


def test_rows_are_written_in_bounded_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "CHUNK_ROWS", 4)  # 6 rows: two row groups, written one after the other
    large = _run(tmp_path, "large", columnar_only_above=5)
    path = columnar.evaluator_parquet(_folders(large.run_dir)["looping_detection"])
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    assert pq.ParquetFile(large.run_dir / "dataset" / "llm_dataset.parquet").metadata.num_row_groups == 2
    rows = sonar_core.open_run(large.run_dir).rows("looping_detection")
    assert rows["key"].tolist() == ["tc1::m1", "tc1::m2", "tc2::m1", "tc2::m2", "tc3::m1", "tc3::m2"]


def test_at_the_setting_json_is_still_written(tmp_path):
    run = _run(tmp_path, "edge", columnar_only_above=6)  # 6 rows, not above 6
    for folder in _folders(run.run_dir).values():
        assert (_formats_dir(folder, names.MIME_JSON) / "explanation.json").is_file()


def test_the_setting_refuses_a_negative_count(tmp_path):
    with pytest.raises(sonar_core.errors.ConfigError, match="columnar_only_above"):
        _run(tmp_path, "bad", columnar_only_above=-1)


def test_without_pyarrow_every_row_is_kept_as_json(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "parquet_available", lambda: False)
    run = _run(tmp_path, "nopyarrow", columnar_only_above=5)  # above the setting, but no Parquet writer
    assert not list(run.run_dir.rglob("*.parquet"))
    for folder in _folders(run.run_dir).values():
        saved = json.loads((_formats_dir(folder, names.MIME_JSON) / "explanation.json").read_text())
        assert [r["key"] for r in saved["results"]] == ["tc1::m1", "tc1::m2", "tc2::m1", "tc2::m2", "tc3::m1", "tc3::m2"]
        assert (_formats_dir(folder, names.MIME_CSV) / "explanation.csv").is_file()
    assert run.rows("text_matching")["model_passes"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]


def test_equal_details_share_their_text_but_never_across_json_types():
    encode = columnar._cell_encoder()
    # Equal in Python, different in JSON: each keeps its own text, asked in either order.
    values = [{"a": 1}, {"a": True}, {"a": 1.0}, {"a": -0.0}, {"a": 0.0}, {"a": (1,)}, {"a": (True,)},
              {1: "x"}, {True: "x"}, {"a": [1]}, {"a": {"b": None}}, {"a": "é"}, {}, []]
    expected = ['{"a":1}', '{"a":true}', '{"a":1.0}', '{"a":-0.0}', '{"a":0.0}', '{"a":[1]}', '{"a":[true]}',
                '{"1":"x"}', '{"true":"x"}', '{"a":[1]}', '{"a":{"b":null}}', '{"a":"é"}', "{}", "[]"]
    assert [encode(v) for v in values] == expected
    assert [encode(v) for v in reversed(values)] == expected[::-1]
