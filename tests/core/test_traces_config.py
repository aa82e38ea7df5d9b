"""``traces:`` in a configuration, ``sonar run``'s trace flags, and ``sonar traces inspect``."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from otlp_builders import write_jsonl
from sonar_core.config import load_config
from sonar_core.errors import ConfigError
from trace_fixtures import openinference_requests


def test_traces_is_a_source_of_its_own():
    with pytest.raises(ConfigError, match=r"^<command line>: 'dataset' and 'traces' exclude each other$"):
        load_config(None, {"dataset": "d.jsonl", "traces": {"files": ["s.jsonl"]}})
    with pytest.raises(ConfigError, match=r"^<command line>: give 'dataset' \(answers to score\), 'test_suite' with "
                                          r"'hosts' \(models to ask\) or 'traces' \(spans to score\)$"):
        load_config(None, {})
    with pytest.raises(ConfigError, match=r"unknown configuration key 'traces.scopes'"):
        load_config(None, {"traces": {"files": ["s.jsonl"], "scopes": "span"}})
    with pytest.raises(ConfigError, match=r"configuration key 'traces.sample_rate': Input should be less than or "
                                          r"equal to 1"):
        load_config(None, {"traces": {"files": ["s.jsonl"], "sample_rate": 2}})


def test_flags_refine_the_files_traces(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"traces": {"files": ["spans/"], "scope": "session", "seed": 3}}))
    config = load_config(path, {"traces": {"scope": "span", "span_kinds": ["tool"]}})
    assert (config.traces.files, config.traces.scope, config.traces.span_kinds, config.traces.seed) == (
        ["spans/"], "span", ["TOOL"], 3)
    assert config.base_dir == str(tmp_path)


def test_workers_are_auto_by_default_two_on_large_files_and_a_count_when_given(tmp_path, monkeypatch):
    from sonar_core.traces import parallel
    from sonar_core.traces.spec import TraceInput

    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(b"{}\n")
    with open(large, "wb") as handle:  # sparse: 64 MiB on paper
        handle.truncate(parallel.AUTO_BYTES)
    assert TraceInput(files=["s"]).workers == "auto" and TraceInput(files=["s"], workers=None).workers == "auto"
    assert TraceInput(files=["s"], workers="3").workers == 3
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 8)
    assert [parallel.worker_count("auto", [small]), parallel.worker_count("auto", [large]),
            parallel.worker_count("auto", [small, large]), parallel.worker_count(1, [large]),
            parallel.worker_count(3, [small])] == [0, 2, 2, 0, 3]
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 1)
    assert parallel.worker_count("auto", [large]) == 0
    config = load_config(None, {"traces": {"files": ["s.jsonl"], "workers": "1"}})
    assert config.traces.workers == 1
    for wrong in ("many", 0, 65, 2.5):
        with pytest.raises(ConfigError, match=r"^<command line>: configuration key 'traces.workers': Value error, use "
                                              rf"auto or a number of processes from 1 to 64, not '{wrong}'$"):
            load_config(None, {"traces": {"files": ["s.jsonl"], "workers": wrong}})


def test_a_run_without_traces_records_no_traces_key(tmp_path):
    import sonar_core

    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps({"input": "q", "actual_output": "a"}) + "\n")
    plain = sonar_core.run(dataset=dataset, evaluators=["pii_leakage"], output_dir=tmp_path, run_id="plain")
    assert "traces" not in json.loads((plain.run_dir / "run.json").read_text())["interpretation_parameters"]
    spans = write_jsonl(tmp_path / "oi.jsonl", openinference_requests())
    traced = sonar_core.run(traces=spans, evaluators=["pii_leakage"], output_dir=tmp_path, run_id="traced")
    recorded = json.loads((traced.run_dir / "run.json").read_text())["interpretation_parameters"]["traces"]
    assert (recorded["files"], recorded["scope"]) == ([str(spans)], "trace")


def test_cli_flags_and_their_errors(tmp_path, sonar_cli):
    spans = write_jsonl(tmp_path / "oi.jsonl", openinference_requests())
    done = subprocess.run([sonar_cli, "run", "--traces", str(spans), "--span-attr", "nokey", "-o", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (2, "error: --span-attr expects KEY=VALUE, got 'nokey'\n")
    done = subprocess.run([sonar_cli, "run", "-o", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.stderr == ("error: give a CONFIG file, --dataset, --test-suite or --traces "
                           "(try: sonar run configs/quickstart.yaml)\n")
    done = subprocess.run([sonar_cli, "run", "--traces", str(spans), "--trace-scope", "span", "--span-kind", "retriever",
                           "--sample-rate", "1", "--trace-workers", "1", "-e", "pii_leakage", "-o", str(tmp_path), "--run-id", "r",
                           "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r" / "run.json").read_text())["interpretation_parameters"]["traces"]["workers"] == 1
    table = (tmp_path / "r" / "annotations.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in table[1:]] == ["b1" * 8, "b2" * 8]  # the two retriever spans


def test_inspect_lists_what_the_files_hold(tmp_path, sonar_cli):
    spans = write_jsonl(tmp_path / "oi.jsonl", openinference_requests())
    done = subprocess.run([sonar_cli, "traces", "inspect", str(spans), "--json"], capture_output=True, text=True,
                          timeout=120)
    found = json.loads(done.stdout)
    assert {k: found[k] for k in ("spans_read", "traces", "root_spans", "sessions", "spans_by_kind", "llm_models",
                                  "services", "spans_skipped")} == {
        "spans_read": 9, "traces": 3, "root_spans": 3, "sessions": 1,
        "spans_by_kind": {"openinference/AGENT": 2, "openinference/LLM": 4, "openinference/RETRIEVER": 2,
                          "openinference/TOOL": 1},
        "llm_models": {"gpt-4o": 2, "gpt-4o-mini": 2}, "services": {"claims-app": 9}, "spans_skipped": {}}
    missing = subprocess.run([sonar_cli, "traces", "inspect", str(tmp_path / "none.jsonl")], capture_output=True,
                             text=True, timeout=120)
    assert (missing.returncode, missing.stderr) == (3, f"error: {tmp_path / 'none.jsonl'}: trace file not found\n")
