"""sonar generate from the command line and from a run configuration: one-line errors, nothing written
outside the output folder, the dry run's table, and `sonar run` with a generate: section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import sonar_core
from generation_script import reply
from judge_server import JudgeServer, write_llm_configs
from sonar_core.cli import cli

DEMO = Path(sonar_core.__file__).parent / "demo" / "docs"


def invoke(*args: str):
    return CliRunner().invoke(cli, ["generate", *args])


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("make, expected", [
    (lambda d: None, "{docs}: no documents found (looked for .txt, .md, .markdown, .html, .htm, .pdf, .jsonl)"),
    (lambda d: (d / "scan.pdf").write_bytes(b"%PDF-1.4 garbage"), None),
    (lambda d: (d / "c.jsonl").write_text('{"id": "a", "text": "t", "source": "s"}\n{"id": "a", "text": "u"}\n'),
     "{docs}/c.jsonl:2, field 'id': duplicate id 'a' (first at line 1)"),
])
def test_bad_documents_are_one_line_exit_3_and_nothing_is_written(tmp_path, make, expected):
    docs = tmp_path / "docs"
    docs.mkdir()
    make(docs)
    before = files_under(tmp_path)
    result = invoke("--docs", str(docs), "-o", str(tmp_path / "out" / "suite.jsonl"), "--no-calibrate")
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    if expected is None:
        assert lines[0].startswith(f"error: {docs}: no usable document (docs/scan.pdf: an unreadable PDF (")
    else:
        assert lines[0] == "error: " + expected.format(docs=docs)
    assert files_under(tmp_path) == before


def test_usage_errors_are_one_line(tmp_path):
    docs = str(DEMO)
    result = invoke("--docs", docs, "-o", str(tmp_path / "suite.csv"))
    assert result.exit_code == 2 and result.stderr.strip() == (
        f"error: {tmp_path / 'suite.csv'}: the generated suite is a JSON Lines file: name it <something>.jsonl")
    result = invoke("--docs", docs, "-o", str(tmp_path / "s.jsonl"), "--types", "riddle=2")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: <command line>: setting 'types': ")
    assert "unknown question type 'riddle'" in result.stderr
    result = invoke("--docs", docs, "-o", str(tmp_path / "s.jsonl"), "--judge", "nope")
    assert result.exit_code == 2 and result.stderr.strip().startswith("error: unknown LLM configuration 'nope'")
    assert files_under(tmp_path) == []


def test_the_dry_run_prints_a_table_and_writes_nothing(tmp_path):
    with JudgeServer(default=reply) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = invoke("--docs", str(DEMO), "-n", "5", "-o", str(tmp_path / "out" / "suite.jsonl"), "--dry-run",
                        "--no-calibrate", "--llm-configs", str(configs), "--llm-cache", str(tmp_path / "c.sqlite"),
                        "--device", "cpu", "--json")
        assert server.calls == 0
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    # 5 items, then one groundedness and one answerability prompt (5 items, 8 a prompt; 1 unanswerable).
    assert estimate["calls"] == {"test-judge": 7, "total": 7}
    assert not (tmp_path / "out").exists() and not (tmp_path / "c.sqlite").exists()


def test_a_run_configuration_generates_then_asks_the_hosts(tmp_path):
    with JudgeServer(default=reply) as server:
        write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        config = tmp_path / "run.yaml"
        config.write_text(yaml.safe_dump({
            "name": "from-docs", "output_dir": "runs", "run_id": "r", "llm_configs": "llm.yaml",
            "llm_cache": "cache.sqlite", "evaluators": ["text_matching"],
            "hosts": [{"key": "lookup", "kind": "python", "callable": "sonar_core.demo.lookup_host:answer"}],
            "generate": {"docs": [str(DEMO)], "n": 4, "output": "suite/generated.jsonl", "calibrate": False,
                         "device": "cpu"},
        }), encoding="utf-8")
        result = CliRunner().invoke(cli, ["run", str(config)])
    assert result.exit_code == 0, result.output
    suite = tmp_path / "suite" / "generated.jsonl"
    keys = sorted(json.loads(line)["test_case_key"] for line in suite.read_text().splitlines())
    assert keys and (tmp_path / "suite" / "generated.report.html").is_file()
    record = json.loads((tmp_path / "runs" / "r" / "run.json").read_text())
    answers = [json.loads(line) for line in (tmp_path / "runs" / "r" / "dataset" / "answers.jsonl").read_text().splitlines()]
    assert sorted(a["test_case_key"] for a in answers) == keys
    assert record["interpretation_parameters"]["generate"]["n"] == 4
