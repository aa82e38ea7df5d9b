"""CSV artifacts neutralise cells a spreadsheet would run as formulas; JSON and .jay keep the text.

The toy score evaluator scores each row with the number in its answer, so an answer "-0.5" is
both a text cell (actual_output, neutralised) and a number (score, never quoted).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.artifacts.csv_cells import neutralise_cell
from sonar_core.cli import cli

ROWS = [
    {"test_case_key": "=1+1", "model_key": "+m", "input": "@SUM(A1)", "actual_output": "-0.5",
     "expected_output": "0.25", "context": ["=ctx"]},
    {"test_case_key": "t2", "model_key": "m2", "input": "\tTab", "actual_output": "0.75", "expected_output": "-1",
     "categories": ["-cat"]},
    {"test_case_key": "t3", "model_key": "m2", "input": "\rCR", "actual_output": "1", "output_condition": "= b",
     "cost": 0.5},
]
HEADER = ("key,test_case_key,model_key,test_key,input,corpus,context,categories,relationships,expected_output,"
          "output_constraints,output_condition,actual_output,actual_duration,cost,original_test_case_key,perturbation,"
          "score,error_rate,result_error_message,details,actual_output_meta\n")
# Text cells starting with = + - @ TAB CR get a leading '; numbers (score -0.5, error_rate -1.0) do not.
# A cell holding a CR is quoted (a reader would otherwise end the row there).
ESCAPED_CSV = HEADER + (
    "'=1+1::+m,'=1+1,'+m,,'@SUM(A1),[],\"[\"\"=ctx\"\"]\",[],[],0.25,[],,'-0.5,,,,,-0.5,0.25,,{},[]\n"
    "t2::m2,t2,m2,,'\tTab,[],[],\"[\"\"-cat\"\"]\",[],'-1,[],,0.75,,,,,0.75,-1.0,,{},[]\n"
    "t3::m2,t3,m2,,\"'\rCR\",[],[],[],[],,[],'= b,1,,0.5,,,1.0,,,{},[]\n"
)
VERBATIM_CSV = HEADER + (
    "=1+1::+m,=1+1,+m,,@SUM(A1),[],\"[\"\"=ctx\"\"]\",[],[],0.25,[],,-0.5,,,,,-0.5,0.25,,{},[]\n"
    "t2::m2,t2,m2,,\tTab,[],[],\"[\"\"-cat\"\"]\",[],-1,[],,0.75,,,,,0.75,-1.0,,{},[]\n"
    "t3::m2,t3,m2,,\"\rCR\",[],[],[],[],,[],= b,1,,0.5,,,1.0,,,{},[]\n"
)


@pytest.fixture(autouse=True)
def _toy_on_path(monkeypatch):
    from conftest import CORE_TESTS

    monkeypatch.syspath_prepend(str(CORE_TESTS))


def _run(tmp_path, *flags):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "--no-progress", "-d", str(dataset), "-e", "toy_score", "-p", "toy_plugin",
                                      "-o", str(tmp_path / "out"), "--run-id", "r", *flags],
                                env={"SONAR_DISABLE_PLUGIN_AUTOLOAD": "1"}, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (folder,) = (tmp_path / "out" / "r").glob("explainer_*")
    return folder / names.EVAL_RESULTS


def _read(path):
    return path.read_bytes().decode("utf-8")


def test_csv_cells_are_neutralised_by_default(tmp_path):
    results = _run(tmp_path)
    assert _read(results / "text_csv" / "explanation.csv") == ESCAPED_CSV
    record = json.loads(_read(tmp_path / "out" / "r" / names.RUN_JSON))["interpretation_parameters"]
    assert record["csv_formula_escape"] is True


def test_json_and_jay_keep_the_exact_text(tmp_path):
    import datatable as dt

    results = _run(tmp_path)
    records = json.loads(_read(results / "application_json" / "explanation.json"))["results"]
    assert [(r["key"], r["model_key"], r["input"], r["actual_output"], r["expected_output"], r["output_condition"])
            for r in records] == [
        ("=1+1::+m", "+m", "@SUM(A1)", "-0.5", "0.25", ""),
        ("t2::m2", "m2", "\tTab", "0.75", "-1", ""),
        ("t3::m2", "m2", "\rCR", "1", "", "= b"),
    ]
    assert [r["score"] for r in records] == [-0.5, 0.75, 1.0]
    frame = dt.fread(str(results / "application_vnd_h2oai_datatable_jay" / "explanation.jay"))
    assert frame["key"].to_list()[0] == ["=1+1::+m", "t2::m2", "t3::m2"]
    assert frame["input"].to_list()[0] == ["@SUM(A1)", "\tTab", "\rCR"]
    assert frame["context"].to_list()[0] == ['["=ctx"]', "[]", "[]"]
    assert frame["score"].to_list()[0] == [-0.5, 0.75, 1.0]


def test_cli_flag_keeps_csv_cells_verbatim(tmp_path):
    results = _run(tmp_path, "--no-csv-formula-escape")
    assert _read(results / "text_csv" / "explanation.csv") == VERBATIM_CSV
    record = json.loads(_read(tmp_path / "out" / "r" / names.RUN_JSON))["interpretation_parameters"]
    assert record["csv_formula_escape"] is False


def test_config_key_keeps_csv_cells_verbatim_and_resume_keeps_it(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    config = tmp_path / "run.yaml"
    config.write_text(f"dataset: {dataset}\nevaluators: [toy_score]\nplugins: [toy_plugin]\n"
                      f"output_dir: {tmp_path / 'out'}\nrun_id: r\ncsv_formula_escape: false\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "--no-progress", str(config)], env={"SONAR_DISABLE_PLUGIN_AUTOLOAD": "1"},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    run_dir = tmp_path / "out" / "r"
    (folder,) = run_dir.glob("explainer_*")
    csv_path = folder / names.EVAL_RESULTS / "text_csv" / "explanation.csv"
    assert _read(csv_path) == VERBATIM_CSV
    # A resumed run re-creates an unfinished folder with the setting recorded in run.json.
    (folder / names.DONE_MARKER).unlink()
    resumed = CliRunner().invoke(cli, ["run", "--no-progress", "--resume", str(run_dir)],
                                 env={"SONAR_DISABLE_PLUGIN_AUTOLOAD": "1"}, catch_exceptions=False)
    assert resumed.exit_code == 0, resumed.stderr
    assert _read(csv_path) == VERBATIM_CSV


def test_work_table_csv_is_neutralised(tmp_path):
    rows = [
        {"test_case_key": "a", "model_key": "m", "input": "q", "expected_output": "=yes", "actual_output": "=yes"},
        {"test_case_key": "b", "model_key": "m", "input": "q", "expected_output": "-no", "actual_output": "=yes"},
        {"test_case_key": "c", "model_key": "m", "input": "q", "expected_output": "-no", "actual_output": "-no"},
    ]
    dataset = tmp_path / "c.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    # "=yes" / "-no" are no known label pair: the binary task names its positive label
    result = sonar_core.run(dataset=str(dataset), evaluators=[{"id": "classification",
                                                               "params": {"positive_label": "=yes"}}],
                            output_dir=str(tmp_path / "out"), run_id="c")
    assert result.status == "success", result.message
    (folder,) = result.run_dir.glob("explainer_*")
    assert _read(folder / names.WORK_DIR / "confusion_matrix_m.csv") == (
        "expected \\ predicted,'-no,'=yes\n"
        "'-no,1,1\n"
        "'=yes,0,1\n"
    )
    table = json.loads(_read(folder / names.WORK_DIR / "confusion_matrix_m.json"))
    assert table["columns"] == ["expected \\ predicted", "-no", "=yes"]
    assert table["rows"] == [["-no", 1, 1], ["=yes", 0, 1]]


@pytest.mark.parametrize(("cell", "written"), [
    ("=1+2", "'=1+2"), ("+1", "'+1"), ("-1", "'-1"), ("@A1", "'@A1"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("a=1", "a=1"), (" =1", " =1"), ("'=1", "'=1"), ("", ""), (-0.5, -0.5), (3, 3), (None, None),
])
def test_neutralise_cell(cell, written):
    assert neutralise_cell(cell) == written


def test_csv_cells_with_a_lone_carriage_return_are_quoted(tmp_path):
    import csv
    import io

    from sonar_core.artifacts.csv_cells import write_csv_rows

    rows = [["a", "b\rc", 1.5], ["plain", "x", None], ["d,e", 'q"r', 2]]
    buffer = io.StringIO()
    write_csv_rows(buffer, csv.writer(buffer, lineterminator="\n"), rows)
    assert buffer.getvalue() == 'a,"b\rc",1.5\nplain,x,\n"d,e","q""r",2\n'
    assert list(csv.reader(io.StringIO(buffer.getvalue(), newline=""))) == [
        ["a", "b\rc", "1.5"], ["plain", "x", ""], ["d,e", 'q"r', "2"]]
