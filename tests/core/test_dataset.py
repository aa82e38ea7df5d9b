"""Dataset loaders (JSON, JSONL, CSV) and their one-line validation errors."""

from __future__ import annotations

import csv
import json

import pytest

from sonar_core import Input
from sonar_core.dataset import load_dataset
from sonar_core.errors import DatasetError


def test_json_list_and_h2o_inputs_wrapper(tmp_path):
    rows = [{"test_case_key": "q1", "model_key": "m", "input": "Q", "actual_output": "A", "context": ["c1", "c2"],
             "relationships": [{"type": "perturbation_of", "target": "q0"}]}]
    for data in (rows, {"inputs": rows}):
        path = tmp_path / "d.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        dataset = load_dataset(path)
        row = dataset.rows[0]
        assert row.key == "q1::m"
        assert row.context == ["c1", "c2"]
        # The relationship links the perturbed case to its original.
        assert row.original_test_case_key == "q0"
    assert dataset.models == ["m"]
    assert dataset.has_column_for(Input.RETRIEVED_CONTEXT)
    assert not dataset.has_column_for(Input.EXPECTED_ANSWER)


def test_jsonl_and_csv_load_the_same_rows(tmp_path):
    records = [
        {"test_case_key": "007", "model_key": "m1", "input": "Q, with comma", "actual_output": "multi\nline ünï",
         "context": ["a", "b"], "actual_duration": 1.5, "cost": 0.25},
        {"test_case_key": "008", "model_key": "m1", "input": "Q2", "actual_output": 'say "hi"', "context": []},
    ]
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    path = tmp_path / "d.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["test_case_key", "model_key", "input", "actual_output", "context", "actual_duration", "cost"])
        for r in records:
            writer.writerow([r["test_case_key"], r["model_key"], r["input"], r["actual_output"],
                             json.dumps(r["context"]), r.get("actual_duration", ""), r.get("cost", "")])
    from_jsonl, from_csv = load_dataset(jsonl), load_dataset(path)
    assert [r.to_dict() for r in from_jsonl.rows] == [r.to_dict() for r in from_csv.rows]
    assert from_csv.rows[0].test_case_key == "007"  # not turned into the number 7
    assert from_csv.rows[0].actual_duration == 1.5 and from_csv.rows[1].cost is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("d.jsonl", '{"input": "a"}\n{"input": "b",\n', "d.jsonl: line 2: malformed JSON (Expecting property name "
                                                       "enclosed in double quotes at column 15)"),
        ("d.json", '[{"input": "a"}, ]', "d.json: invalid JSON at line 1, column 18: Expecting value"),
        ("d.json", '{"rows": 3}', "d.json: expected a list of rows or an object with an 'inputs' list"),
        ("d.json", "[]", "d.json: dataset has no rows"),
        ("d.json", '[{"input": "q", "actual_duration": "fast"}]',
         "d.json: row 1, field 'actual_duration': expected a number, got 'fast'"),
        ("d.json", '[{"input": "q"}, {"input": "q", "cost": -1}]',
         "d.json: row 2, field 'cost': must not be negative, got -1"),
        ("d.json", '[{"input": "q", "context": "[1, 2"}]', "d.json: row 1, field 'context': not a valid JSON list "
                                                            "(Expecting ',' delimiter)"),
        ("d.json", '[{"input": "q", "context": [1]}]', "d.json: row 1, field 'context': expected a list of strings"),
        ("d.json", '[{"model_key": "m"}]', "d.json: row 1: row has neither 'input' nor 'actual_output'"),
        ("d.json", '["text"]', "d.json: row 1: expected an object, got str"),
        ("d.json", '[{"key": "k", "input": "a"}, {"key": "k", "input": "b"}]',
         "d.json: row 2, field 'key': duplicate key 'k' (first at row 1)"),
        ("d.txt", "x", "d.txt: unknown dataset format '.txt' (use .json, .jsonl or .csv)"),
    ],
)
def test_bad_input_names_file_row_and_field(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == f"{tmp_path}/{message}"


def test_non_utf8_and_missing_file(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"input,actual_output\nq,caf\xe9\n")
    with pytest.raises(DatasetError, match=r"d\.csv: not UTF-8 \(invalid byte 0xe9 on line 2\)$"):
        load_dataset(path)
    with pytest.raises(DatasetError, match=r"nope\.json: dataset file not found$"):
        load_dataset(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # An opening quote that never closes: the rest of the file would become one cell.
        ('input,actual_output,test_case_key\n"q1,a1,k1\nq2,a2,k2\n',
         "line 2, column 'input': unbalanced quote (the quoted field that starts here is never closed)"),
        ('input,actual_output,test_case_key\nq1,a1,"k1\nq2,a2,k2\n',
         "line 2, column 'test_case_key': unbalanced quote (the quoted field that starts here is never closed)"),
        # A stray quote at the end of a key (the reader used to keep it in the key).
        ('input,actual_output,test_case_key\r\nq1,a1,k1"\r\nq2,a2,k2\r\n',
         "line 2, column 'test_case_key': unbalanced quote (a '\"' inside a field that is not enclosed in quotes; "
         "enclose the field in quotes and write each '\"' in it as '\"\"')"),
        ('input,actual_output\n"q1"x,a1\n',
         "line 2, column 'input': unbalanced quote (text after the closing quote; write a '\"' inside a quoted "
         "field as '\"\"')"),
        # Lines are the file's lines: a quoted cell spanning two lines moves the count on.
        ('input,actual_output\n"multi\nline",ok\nq,"a\n',
         "line 4, column 'actual_output': unbalanced quote (the quoted field that starts here is never closed)"),
        ('in"put,actual_output\nq,a\n',
         "line 1, field 1: unbalanced quote (a '\"' inside a field that is not enclosed in quotes; enclose the field "
         "in quotes and write each '\"' in it as '\"\"')"),
    ],
)
def test_csv_with_an_unbalanced_quote_names_the_line(tmp_path, content, message):
    path = tmp_path / "d.csv"
    path.write_bytes(content.encode("utf-8"))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == f"{path}: {message}"


def test_csv_with_balanced_quotes_loads(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b'input,actual_output,test_case_key\r\n"multi\nline ""x""",,"k,1"\r\n"q",""""," k2 "\r\n')
    rows = load_dataset(path).rows
    assert [(r.input, r.actual_output, r.test_case_key) for r in rows] == [
        ('multi\nline "x"', "", "k,1"), ("q", '"', " k2 "),
    ]
