"""The four defects found by hand (issue 25), each with its exact message and exit code, and the output
folder's checks (docs/reliability.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge_server import JudgeServer
from sonar_core import names
from sonar_core.cli import cli

ROWS = [
    {"key": "a", "input": "Capital of France?", "expected_output": "Paris", "actual_output": "Par\ud800is",
     "model_key": "m1", "test_case_key": "t1"},
    {"key": "b", "input": "Capital of Spain?", "expected_output": "Madrid", "actual_output": "Madrid",
     "model_key": "m1", "test_case_key": "t2"},
]
RULE = ("use 1 to 128 letters, digits, '.', '_' and '-', starting with a letter, digit or '_' (it names a folder)")


def sonar(*args: str) -> tuple[int, str]:
    """``sonar run ARGS`` in this process: exit code and standard error."""
    result = CliRunner().invoke(cli, ["run", "--no-progress", *args], catch_exceptions=False)
    return result.exit_code, result.stderr


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


def _dataset(tmp_path: Path, rows=ROWS) -> Path:
    path = tmp_path / "d.json"
    # ensure_ascii: the file holds the escape "\ud800", valid JSON, as a model API may send it.
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _journal(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]


def test_a_lone_surrogate_in_an_answer_is_replaced_counted_and_the_run_finishes_and_resumes(tmp_path):
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "factual_knowledge", "-o", str(tmp_path / "out"),
                         "--run-id", "r")
    run_dir = tmp_path / "out" / "r"
    assert code == 0, stderr
    assert (run_dir / names.INDEX_HTML).is_file()
    run = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert run["result"]["dataset"]["text_cleaned"] == {"actual_output": 1}
    cleaned = [e for e in _journal(run_dir) if e["message"] == "cleaned text"]
    assert [e["fields"] for e in cleaned] == [{"actual_output": 1}]
    folder = next(run_dir.glob("explainer_*FactualKnowledge*"))
    results = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text("utf-8"))
    assert sorted(r["actual_output"] for r in results["results"]) == ["Madrid", "Par\ufffdis"]

    # An interrupted run (its evaluator unfinished, no index.html) resumes to the end.
    (folder / names.DONE_MARKER).unlink()
    (run_dir / names.INDEX_HTML).unlink()
    code, stderr = sonar("--resume", str(run_dir))
    assert code == 0, stderr
    assert (run_dir / names.INDEX_HTML).is_file()
    assert json.loads((run_dir / names.RUN_JSON).read_text("utf-8"))["result"]["dataset"]["text_cleaned"] == \
        {"actual_output": 1}


def test_a_lone_surrogate_in_a_hosts_answer_is_replaced_and_counted(tmp_path):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": r["test_case_key"], "input": r["input"],
                                         "expected_output": r["expected_output"]}) + "\n" for r in ROWS), "utf-8")
    with JudgeServer(default="Par\ud800is") as server:
        host = f"{{key: m, kind: openai_chat, model: m, base_url: '{server.base_url}', retries: 0}}"
        code, stderr = sonar("--test-suite", str(suite), "--host", host, "-e", "factual_knowledge",
                             "-o", str(tmp_path / "out"), "--run-id", "r", "--llm-cache", str(tmp_path / "c.sqlite"))
    run_dir = tmp_path / "out" / "r"
    assert code == 0, stderr
    produced = json.loads((run_dir / names.DATASET_DIR / names.LLM_DATASET_JSON).read_text("utf-8"))
    assert [r["actual_output"] for r in produced] == ["Par\ufffdis", "Par\ufffdis"]
    run = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert run["result"]["dataset"]["text_cleaned"] == {"actual_output": 2}
    assert (run_dir / names.INDEX_HTML).is_file()


@pytest.mark.parametrize("flag, message", [
    (("--threshold", "factual_knowledge=nan"), "--threshold factual_knowledge: expected a finite number, got 'nan'"),
    (("--threshold", "factual_knowledge=-inf"), "--threshold factual_knowledge: expected a finite number, got '-inf'"),
    (("--param", "factual_knowledge.metric_threshold=inf"),
     "parameter 'metric_threshold' of evaluator 'factual_knowledge' must be of type float, got 'inf'"),
])
def test_nan_and_infinities_in_flags_are_one_line_usage_errors(tmp_path, flag, message):
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "factual_knowledge", "-o", str(tmp_path / "out"), *flag)
    assert (code, errors(stderr)) == (2, [f"error: {message}"])
    assert "Traceback" not in stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("yaml_text, message", [
    ("thresholds: {factual_knowledge: .nan}", "configuration key 'thresholds.factual_knowledge': "
                                               "Input should be a finite number"),
    ("batch_size: .inf", "configuration key 'batch_size': Input should be a finite number"),
    ("evaluators: [{id: factual_knowledge, thresholds: {factual_knowledge: -.inf}}]",
     "configuration key 'evaluators.0.thresholds.factual_knowledge': Input should be a finite number"),
])
def test_nan_and_infinities_in_a_configuration_name_the_key(tmp_path, yaml_text, message):
    _dataset(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text(f"dataset: d.json\n{yaml_text}\n", encoding="utf-8")
    code, stderr = sonar(str(config))
    assert (code, errors(stderr)) == (2, [f"error: {config}: {message}"])


def test_a_host_setting_of_infinity_names_the_host_and_setting(tmp_path):
    suite = tmp_path / "s.jsonl"
    suite.write_text('{"input": "q"}\n', encoding="utf-8")
    code, stderr = sonar("--test-suite", str(suite), "--host",
                         "{key: m, kind: openai_chat, model: m, base_url: 'http://127.0.0.1:9/v1', timeout: .inf}",
                         "-o", str(tmp_path / "out"))
    assert (code, errors(stderr)) == (2, ["error: hosts[0] (key 'm'): setting 'timeout': Input should be a finite number"])


@pytest.mark.parametrize("run_id", ["../escape", "/tmp/abs", "a/b", ".hidden", "-x", "", "x" * 129, "tab\there"])
def test_a_run_id_with_path_characters_is_refused_and_nothing_is_written(tmp_path, run_id):
    out = tmp_path / "sub" / "out"
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "factual_knowledge", "-o", str(out), "--run-id", run_id)
    if run_id == "":  # click passes an empty value on as "not given"? No: the config sees ''.
        assert code == 2
    else:
        assert (code, errors(stderr)) == (2, [f"error: <command line>: configuration key 'run_id': {RULE}"])
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["d.json"]


def test_a_shared_configurations_run_id_and_evaluator_name_are_checked(tmp_path):
    _dataset(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text("dataset: d.json\nrun_id: ../../escape\n", encoding="utf-8")
    assert sonar(str(config)) == (2, f"error: {config}: configuration key 'run_id': {RULE}\n")
    config.write_text("dataset: d.json\nname: ../up\n", encoding="utf-8")
    assert sonar(str(config)) == (2, f"error: {config}: configuration key 'name': {RULE}\n")
    config.write_text("dataset: d.json\nevaluators: [{id: factual_knowledge, name: ../fk}]\n", encoding="utf-8")
    code, stderr = sonar(str(config))
    assert (code, stderr) == (2, f"error: {config}: configuration key 'evaluators.0.name': {RULE}\n")


def test_a_run_folder_that_is_a_link_out_of_the_output_folder_is_refused(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "r").symlink_to(elsewhere)
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "factual_knowledge", "-o", str(out), "--run-id", "r")
    assert (code, errors(stderr)) == (2, [f"error: run id 'r': the run folder would be outside the output folder {out}"])
    assert list(elsewhere.iterdir()) == []


def test_a_test_suite_whose_host_is_down_exits_1_naming_the_first_failure(tmp_path):
    suite = tmp_path / "s.jsonl"
    suite.write_text('{"test_case_key": "t1", "input": "q1"}\n{"test_case_key": "t2", "input": "q2"}\n', "utf-8")
    code, stderr = sonar("--test-suite", str(suite), "--host",
                         "{key: m, kind: openai_chat, model: m, base_url: 'http://127.0.0.1:9/v1', retries: 0}",
                         "-e", "factual_knowledge", "-o", str(tmp_path / "out"), "--run-id", "r", "--no-cache")
    assert code == 1
    [line] = errors(stderr)
    assert line.startswith("error: nothing could be scored: all 2 item(s) failed; the first, test case 't1' on host "
                           "'m': connection: ")
    assert line.endswith("(after 1 attempt)")
    assert json.loads((tmp_path / "out" / "r" / names.RUN_JSON).read_text("utf-8"))["status"] == "failed"


def test_an_output_folder_that_cannot_be_made_fails_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    code, stderr = sonar("-d", str(tmp_path / "missing.json"), "-o", str(blocker / "out"))
    # Checked before the dataset is read: the missing dataset is not what it reports.
    assert (code, errors(stderr)) == (6, [f"error: {blocker}: not a folder; the output folder {blocker / 'out'} "
                                          f"cannot be made there"])


def _as_unprivileged(check, folder: Path) -> str:
    """``check(folder)`` in a forked child that has given up root (user and group nobody, 65534): its error
    message, or "" when it raised none. As root (CI runs as root) a read-only folder is writable; to the
    child, as to any user, it is not."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery from here on, only os._exit
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            try:
                check(folder)
                message = ""
            except Exception as exc:  # noqa: BLE001 - the message is what the parent checks
                message = str(exc) or type(exc).__name__
            os.write(write, message.encode("utf-8"))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode("utf-8")
    os.waitpid(pid, 0)
    return message


def test_a_read_only_output_folder_fails_before_any_work(tmp_path):
    """Runs in CI, as root, too (issue 35): there the check runs in a child that gave up root."""
    from sonar_core.execution.output_dir import check_writable

    if os.geteuid() != 0:
        out = tmp_path / "out"
        out.mkdir(mode=0o500)
        code, stderr = sonar("-d", str(_dataset(tmp_path)), "-o", str(out))
        assert (code, errors(stderr)) == (6, [f"error: {out}: cannot write there (Permission denied)"])
        return
    import tempfile

    # Under /tmp itself: pytest's own folders are closed to other users.
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        root.chmod(0o755)
        (out := root / "out").mkdir(mode=0o500)
        (open_to_all := root / "open").mkdir(mode=0o777)
        open_to_all.chmod(0o777)  # past the umask
        assert _as_unprivileged(check_writable, out) == f"{out}: cannot write there (Permission denied)"
        assert _as_unprivileged(check_writable, open_to_all) == ""  # where it may write, it can


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_no_one_can_write_into_fails_before_any_work(tmp_path):
    """/proc takes no new file, whoever asks (root included): the check's report, through the command."""
    out = Path("/proc") / f"sonar-test-{os.getpid()}"
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-o", str(out))
    assert code == 6
    (line,) = errors(stderr)
    assert line in {f"error: /proc: cannot write there ({reason})"
                    for reason in ("No such file or directory", "Permission denied", "Read-only file system")}


def test_answers_holding_unicode_line_separators_are_read_back_whole_on_resume(tmp_path):
    from sonar_core.execution.pipeline import AnswerStore

    # U+2028, U+0085 and U+001E end a line for str.splitlines, not for JSON Lines (found by the fuzz suite).
    record = {"test_case_key": "t1", "model_key": "m", "actual_output": "a\u2028b\x85c\x1ed"}
    store = AnswerStore(tmp_path / "answers.jsonl")
    store.add([record])
    store.close()
    again = AnswerStore(tmp_path / "answers.jsonl")
    assert again.get(("t1", "m")) == record
    again.close()


@pytest.mark.parametrize("raw, shown", [("Infinity", "inf"), ("1e999", "inf"), ("1" + "0" * 400, "1" + "0" * 80)])
def test_an_infinite_or_huge_number_in_a_dataset_names_the_row_and_field(tmp_path, raw, shown):
    # Found by the fuzz suite: an infinite duration failed every evaluator ("Out of range float values are not
    # JSON compliant"), and an integer too large for a float was an OverflowError traceback.
    path = tmp_path / "d.json"
    path.write_text(f'[{{"input": "q", "actual_output": "a", "actual_duration": {raw}}}]', encoding="utf-8")
    code, stderr = sonar("-d", str(path), "-e", "looping_detection", "-o", str(tmp_path / "out"))
    assert code == 3 and errors(stderr) == [line for line in errors(stderr) if line.startswith(
        f"error: {path}: row 1, field 'actual_duration': expected a finite number, got {shown}")] != []
    assert not (tmp_path / "out").exists()


def test_usage_errors_and_quoted_values_are_one_printable_line(tmp_path):
    # Found by the fuzz suite: click's usage block was four lines, and a quoted value's line break split the error.
    assert sonar("--fail-on-problems", "x", "-d", "d.json") == (
        2, "error: Invalid value for '--fail-on-problems': 'x' is not one of 'high', 'medium', 'low'. (see --help)\n")
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "factual_knowledge", "--param", "a\nb\x1b\ud800.x=1")
    # The lone surrogate became U+FFFD as the arguments were read; the control characters are quoted.
    assert (code, stderr) == (2, "error: --param names evaluator 'a\\nb\\x1b\ufffd', which is not listed in this run\n")


def test_a_lone_surrogate_in_any_argument_is_cleaned_before_an_option_reads_it(tmp_path):
    # Found by `bench/fuzz.py --minutes 30`: one in a path argument crashed click's path check with
    # UnicodeEncodeError, and one in --device reached run.json, whose writing then failed.
    assert sonar(str(tmp_path / "c\ud800.yaml")) == (2, f"error: {tmp_path / 'c'}\ufffd.yaml: configuration file not found\n")
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "-e", "looping_detection", "-o", str(tmp_path / "out"),
                         "--run-id", "r", "--device", "Par\udfffis")
    assert (code, errors(stderr)) == (0, [])
    record = json.loads((tmp_path / "out" / "r" / "run.json").read_text(encoding="utf-8"))
    assert record["interpretation_parameters"]["device"] == "Par\ufffdis"


def test_yaml_nested_too_deeply_is_a_one_line_error(tmp_path):
    # Found by `bench/fuzz.py`: PyYAML recurses once per level, and '[' * 2000 raised RecursionError.
    deep = "[" * 2000
    code, stderr = sonar("-d", str(_dataset(tmp_path)), "--host", deep)
    assert code == 2 and errors(stderr) == stderr.splitlines() and len(errors(stderr)) == 1
    assert errors(stderr)[0].startswith("error: --host '[[[[") and "expected a YAML mapping" in stderr
    config = tmp_path / "c.yaml"
    config.write_text(deep, encoding="utf-8")
    assert sonar(str(config)) == (2, f"error: {config}: invalid YAML: nested too deeply\n")
