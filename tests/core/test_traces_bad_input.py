"""Bad span input: each fault skips what it spoils, counted with its reason, and never a traceback.

One file holds a good trace (its children before its root, over two lines) among truncated and
malformed lines, spans of no kind, of the wrong attribute types, of no known convention, with a 10 MB
attribute, ending before they start, with a duplicate id or bad ids, and a trace with no root. The good
trace still becomes its row; every other span and line is counted under its reason, and the run's
dataset problem says so. A file of which nothing can be read is one line of error (exit 3).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from otlp_builders import request, span, write_jsonl
from sonar_core import names
from sonar_core.errors import DatasetError
from sonar_core.traces.load import load_traces
from sonar_core.traces.spec import TraceInput

GOOD, ROOT, CHILD = "9" * 32, "aa" * 8, "ab" * 8
LLM = {"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.input_messages.0.message.role": "user",
       "llm.input_messages.0.message.content": "Is theft covered?",
       "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "Yes."}


def _trace(n: int) -> str:
    return f"{n:032x}"


def bad_file(tmp_path):
    good_child = span(GOOD, CHILD, ROOT, "llm", 1, 2, LLM)
    good_root = span(GOOD, ROOT, "", "agent", 0, 3, {"openinference.span.kind": "CHAIN", "input.value": "Is theft covered?",
                                                     "output.value": "Yes, theft is covered."})
    wrong_int = span(_trace(3), "03" * 8, "", "llm", 0, 1, {})
    wrong_int["attributes"] = [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                               {"key": "llm.token_count.prompt", "value": {"intValue": "many"}}]
    bad_ids = span(_trace(9), "09" * 8, "", "x", 0, 1, {"openinference.span.kind": "LLM"})
    bad_ids["traceId"] = "not-hex"
    faulty = [
        span(_trace(1), "01" * 8, "", "no kind", 0, 1, {"input.value": "q", "output.value": "a"}),
        span(_trace(2), "02" * 8, "", "llm", 0, 1, {"openinference.span.kind": "LLM", "llm.token_count.prompt": "12"}),
        wrong_int,
        span(_trace(4), "04" * 8, "", "GET /health", 0, 1, {"http.method": "GET"}),
        span(_trace(5), "05" * 8, "", "big", 0, 1, {"openinference.span.kind": "CHAIN", "input.value": "x" * 10_000_000}),
        span(_trace(6), "06" * 8, "", "late", 5, 1, {"openinference.span.kind": "CHAIN"}),
        span(GOOD, CHILD, ROOT, "llm again", 1, 2, {**LLM, "llm.model_name": "other"}),
        bad_ids,
        span(_trace(10), "0a" * 8, "", "chat", 0, 1, {"gen_ai.request.model": "m"}),
        span(_trace(11), "0b" * 8, "", "odd", 0, 1, {"openinference.span.kind": "SUMMARIZER"}),
        span(_trace(12), "0c" * 8, "ff" * 8, "orphan", 0, 1, LLM),
        good_root,
    ]
    path = tmp_path / "bad.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(request([good_child])) + "\n")
        handle.write('{"resourceSpans": [{"scopeSpans": \n')
        handle.write('{"hello": "world"}\n')
        handle.write(json.dumps(request(faulty)) + "\n")
        handle.write('{"resourceSpans": [{"scopeSpans": [{"spans": [')  # a line cut short: the file's end
    return path


SPANS_SKIPPED = {"attribute too large": 1, "duplicate span id": 1, "ends before it starts": 1, "invalid ids": 1,
                 "no span kind": 2, "trace has no root": 1, "unknown convention": 1, "unknown span kind": 1,
                 "wrong attribute type": 2}
LINES_SKIPPED = {"malformed JSON": 1, "not an OTLP trace request": 1, "truncated line": 1}


def test_every_fault_is_skipped_and_counted_and_the_good_trace_is_a_row(tmp_path):
    path = bad_file(tmp_path)
    dataset = load_traces(TraceInput(files=[str(path)]))
    assert [(r.test_case_key, r.span_id, r.input, r.actual_output, r.model_key) for r in dataset.rows] == [
        (GOOD, ROOT, "Is theft covered?", "Yes, theft is covered.", "m")]
    traces = dataset.summary()["traces"]
    assert traces["spans_read"] == 13 and traces["lines_read"] == 5
    assert traces["spans_skipped"] == SPANS_SKIPPED
    assert traces["lines_skipped"] == LINES_SKIPPED
    examples = traces["skip_examples"]
    assert examples["wrong attribute type"] == [
        f"{path}: line 4, span {'02' * 8}: attribute 'llm.token_count.prompt' must be a count (int), got string '12'",
        f"{path}: line 4, span {'03' * 8}: attribute 'llm.token_count.prompt': intValue 'many' is not an integer"]
    assert examples["attribute too large"] == [
        f"{path}: line 4, span {'05' * 8}: attribute 'input.value' holds 10,000,000 characters (limit 1,000,000)"]
    assert examples["duplicate span id"] == [
        f"{path}: line 4, span {CHILD}: span {CHILD} of trace {GOOD} appears again; the first one is kept"]
    assert examples["unknown convention"] == [
        f"{path}: line 4, span {'04' * 8}: span 'GET /health' has neither OpenInference nor GenAI attributes"]
    assert examples["no span kind"] == [
        f"{path}: line 4, span {'01' * 8}: OpenInference attributes but no 'openinference.span.kind'",
        f"{path}: line 4, span {'0a' * 8}: gen_ai.* attributes but no 'gen_ai.operation.name'"]
    assert examples["trace has no root"] == [
        f"{path}: trace {_trace(12)}: none of its 1 span(s) is a root (all have a parent)"]
    assert examples["truncated line"][0].startswith(f"{path}: line 5: ")


def test_the_run_reports_the_skipped_spans_as_a_dataset_problem(tmp_path):
    import sonar_core

    result = sonar_core.run(traces=[bad_file(tmp_path)], evaluators=["pii_leakage"], output_dir=tmp_path / "reports",
                            run_id="bad")
    assert result.status == "success" and result.exit_code == 0
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["result"]["dataset"]["traces"]["spans_skipped"] == SPANS_SKIPPED
    (problem,) = [p for p in record["result"]["problems"] if p["evaluator_id"] == "traces"]
    assert (problem["severity"], problem["problem_type"]) == ("MEDIUM", "dataset")
    assert problem["description"].startswith(
        "Trace input not scored (13 span(s) read): 2 span(s): no span kind; 2 span(s): wrong attribute type; "
        "1 span(s): attribute too large; ")
    assert "1 line(s): truncated line" in problem["description"]


def test_only_spans_of_no_convention_make_a_low_problem():
    from sonar_core.findings.trace_problems import skipped_span_problems

    assert skipped_span_problems({"spans_skipped": {}, "lines_skipped": {}}) == []
    (problem,) = skipped_span_problems({"spans_read": 3, "spans_skipped": {"unknown convention": 2},
                                        "lines_skipped": {}, "skip_examples": {"unknown convention": ["f: line 1"]}})
    assert problem["severity"] == "LOW"
    assert problem["description"] == "Trace input not scored (3 span(s) read): 2 span(s): unknown convention. First: f: line 1"


def test_nothing_readable_is_one_line_of_error(tmp_path, sonar_cli):
    path = tmp_path / "junk.jsonl"
    path.write_text("not json\n{\"resourceSpans\": 3}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"^.*junk\.jsonl: no span could be read \(.*junk\.jsonl: line 1: "
                                           r"Expecting value: line 1 column 1 \(char 0\)\)$"):
        load_traces(TraceInput(files=[str(path)]))
    done = subprocess.run([sonar_cli, "run", "--traces", str(path), "-e", "pii_leakage", "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [f"error: {path}: no span could be read ({path}: line 1: Expecting value: "
                                        "line 1 column 1 (char 0))"]
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_no_row_says_why(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [request([span(GOOD, ROOT, "", "agent", 0, 1, {
        "openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"})])])
    with pytest.raises(DatasetError) as caught:
        load_traces(TraceInput(files=[str(path)], scope="span"))
    assert str(caught.value) == (f"{path}: no rows at span scope from 1 span(s) in 1 trace(s): "
                                 "1 left out by the filters, 0 by sampling")


def test_missing_files_and_folders(tmp_path):
    with pytest.raises(DatasetError, match=r"nope\.jsonl: trace file not found$"):
        load_traces(TraceInput(files=[str(tmp_path / "nope.jsonl")]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"empty: no span files \(\.jsonl, \.ndjson, \.json, \.pb, \.binpb, or \.gz\) "
                                           r"in this folder$"):
        load_traces(TraceInput(files=[str(tmp_path / "empty")]))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DatasetError, match=r"notes\.txt: unknown span file type"):
        load_traces(TraceInput(files=[str(tmp_path / "notes.txt")]))


def test_protobuf_garbage_and_a_cut_frame_are_counted(tmp_path):
    from otlp_builders import to_protobuf

    good = to_protobuf(request([span(GOOD, ROOT, "", "agent", 0, 1, {
        "openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"})])).SerializeToString()
    garbage = b"\xff\xff\xff\xff"
    path = tmp_path / "spans.pb"
    path.write_bytes(len(garbage).to_bytes(4, "big") + garbage + len(good).to_bytes(4, "big") + good
                     + (1000).to_bytes(4, "big") + b"short")
    dataset = load_traces(TraceInput(files=[str(path)]))
    assert [r.test_case_key for r in dataset.rows] == [GOOD]
    assert dataset.summary()["traces"]["lines_skipped"] == {"malformed protobuf": 1, "truncated protobuf message": 1}
