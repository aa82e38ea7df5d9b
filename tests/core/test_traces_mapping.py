"""Spans to rows, for both conventions at each scope, against rows written out by hand (docs/traces.md).

The traffic is in trace_fixtures.py: its spans are written in the order they end (a trace's root last,
its children spread over requests), as an OpenTelemetry exporter writes them.
"""

from __future__ import annotations

import gzip
import json
import hashlib

import pytest

from otlp_builders import write_jsonl, write_pb
from sonar_core.traces.load import load_traces
from sonar_core.traces.spec import TraceInput
from trace_fixtures import (A1, A1_TEXT, A2, A2_TEXT, CALL, G1, G2, GA1, GA1_TEXT, GA2, GA2_TEXT, GC1, GC2, GC3,
                            GQ1, GQ2, GSYSTEM, L1, L2, L3, L4, Q1, Q2, RESULT, SYSTEM, T1, T2, T3,
                            genai_requests, openinference_requests)

FIELDS = ("test_case_key", "model_key", "input", "actual_output", "context", "conversation", "categories",
          "actual_duration", "cost", "trace_id", "span_id")
DOCS1 = ["Theft is covered under home contents.", "The deductible is 100 USD."]
DOCS2 = ["Claims are paid within 10 days."]
CALL_TURN = {"role": "assistant", "content": "", "tool_calls": [CALL]}
TOOL_TURN = {"role": "tool", "content": RESULT, "tool_call_id": "call_1", "name": "lookup_policy"}
GCALL = {"name": "get_weather", "arguments": {"location": "Paris"}, "id": "call_w"}


def rows(path, **settings):
    dataset = load_traces(TraceInput(files=[str(path)], **settings))
    out = []
    for row in dataset.rows:
        record = {name: getattr(row, name) for name in FIELDS}
        out.append({k: v for k, v in record.items() if v not in ([], None)})
    return out, dataset


def expect(**fields):
    return {k: v for k, v in fields.items() if v not in ([], None)}


@pytest.fixture
def openinference(tmp_path):
    return write_jsonl(tmp_path / "oi.jsonl", openinference_requests())


@pytest.fixture
def genai(tmp_path):
    return write_jsonl(tmp_path / "genai.jsonl", genai_requests())


def test_openinference_span_scope(openinference):
    got, dataset = rows(openinference, scope="span")
    assert got == [
        # A reply that only calls a tool: the call is the answer.
        expect(test_case_key=L1, model_key="gpt-4o", input=Q1, actual_output='lookup_policy({"policy_id":"NW-1001"})',
               context=DOCS1,
               conversation=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}, CALL_TURN],
               categories=["ChatCompletion"], actual_duration=2.0, cost=0.0005, trace_id=T1, span_id=L1),
        expect(test_case_key=L2, model_key="gpt-4o", input=Q1, actual_output=A1_TEXT, context=DOCS1 + DOCS2,
               conversation=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}, CALL_TURN,
                             {"role": "tool", "content": RESULT, "tool_call_id": "call_1"},
                             {"role": "assistant", "content": A1_TEXT}],
               categories=["ChatCompletion"], actual_duration=3.0, cost=0.0015, trace_id=T1, span_id=L2),
        expect(test_case_key=L3, model_key="gpt-4o-mini", input=Q2, actual_output=A2_TEXT, categories=["ChatCompletion"],
               actual_duration=1.0, trace_id=T2, span_id=L3),
        expect(test_case_key=L4, model_key="gpt-4o-mini", input="Hi", actual_output="Hello! How can I help?",
               categories=["ChatCompletion"], actual_duration=1.0, trace_id=T3, span_id=L4),
    ]
    summary = dataset.summary()["traces"]
    assert (summary["spans_read"], summary["traces"], summary["rows"], summary["spans_skipped"]) == (9, 3, 4, {})
    assert summary["filtered_out"] == 5  # the AGENT, RETRIEVER and TOOL spans: not LLM calls


def test_openinference_trace_scope(openinference):
    got, dataset = rows(openinference)
    assert got == [
        expect(test_case_key=T1, model_key="gpt-4o", input=Q1, actual_output=A1_TEXT, context=DOCS1 + DOCS2,
               conversation=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}, CALL_TURN,
                             TOOL_TURN, {"role": "assistant", "content": A1_TEXT}],
               categories=["claims_agent"], actual_duration=10.0, cost=pytest.approx(0.002), trace_id=T1, span_id=A1),
        expect(test_case_key=T2, model_key="gpt-4o-mini", input=Q2, actual_output=A2_TEXT, categories=["claims_agent"],
               actual_duration=2.0, trace_id=T2, span_id=A2),
        expect(test_case_key=T3, model_key="gpt-4o-mini", input="Hi", actual_output="Hello! How can I help?",
               categories=["ChatCompletion"], actual_duration=1.0, trace_id=T3, span_id=L4),
    ]
    assert dataset.columns == ["test_case_key", "model_key", "input", "actual_output", "categories", "actual_duration",
                               "trace_id", "span_id", "cost", "context", "conversation"]


def test_openinference_session_scope(openinference):
    got, dataset = rows(openinference, scope="session")
    assert got == [expect(
        test_case_key="sess-1", model_key="gpt-4o", input=Q1, actual_output=A2_TEXT, context=DOCS1 + DOCS2,
        conversation=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}, CALL_TURN, TOOL_TURN,
                      {"role": "assistant", "content": A1_TEXT}, {"role": "user", "content": Q2},
                      {"role": "assistant", "content": A2_TEXT}],
        categories=["claims_agent"], actual_duration=12.0, cost=pytest.approx(0.002), trace_id=T1, span_id=A1)]
    summary = dataset.summary()["traces"]
    # T3 has no session: its one span is skipped, and said so.
    assert (summary["sessions"], summary["spans_skipped"]) == (1, {"no session id": 1})
    assert summary["skip_examples"]["no session id"][0].endswith(
        f"trace {T3}: no span has session.id or gen_ai.conversation.id")


def test_genai_span_scope(genai):
    got, _ = rows(genai, scope="span")
    assert got == [
        expect(test_case_key=GC1, model_key="gpt-4.1", input=GQ1, actual_output='get_weather({"location":"Paris"})',
               context=["Paris: rain expected."],
               conversation=[{"role": "system", "content": GSYSTEM}, {"role": "user", "content": GQ1},
                             {"role": "assistant", "content": "", "tool_calls": [GCALL]}],
               categories=["chat gpt-4.1"], actual_duration=2.0, trace_id=G1, span_id=GC1),
        expect(test_case_key=GC2, model_key="gpt-4.1", input=GQ1, actual_output=GA1_TEXT,
               context=["Paris: rain expected."],
               conversation=[{"role": "user", "content": GQ1}, {"role": "assistant", "content": "", "tool_calls": [GCALL]},
                             {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_w"},
                             {"role": "assistant", "content": GA1_TEXT}],
               categories=["chat gpt-4.1"], actual_duration=2.0, trace_id=G1, span_id=GC2),
        expect(test_case_key=GC3, model_key="gpt-4.1-mini", input=GQ2, actual_output=GA2_TEXT,
               categories=["chat gpt-4.1-mini"], actual_duration=1.0, trace_id=G2, span_id=GC3),
    ]


def test_genai_trace_scope(genai):
    got, _ = rows(genai, scope="trace")
    assert got == [
        expect(test_case_key=G1, model_key="gpt-4.1", input=GQ1, actual_output=GA1_TEXT, context=["Paris: rain expected."],
               conversation=[{"role": "system", "content": GSYSTEM}, {"role": "user", "content": GQ1},
                             {"role": "assistant", "content": "", "tool_calls": [GCALL]},
                             {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_w", "name": "get_weather"},
                             {"role": "assistant", "content": GA1_TEXT}],
               categories=["invoke_agent travel"], actual_duration=8.0, trace_id=G1, span_id=GA1),
        # Its root's messages are in its gen_ai.client.inference.operation.details event.
        expect(test_case_key=G2, model_key="gpt-4.1-mini", input=GQ2, actual_output=GA2_TEXT,
               categories=["invoke_agent travel"], actual_duration=3.0, trace_id=G2, span_id=GA2),
    ]


def test_genai_session_scope(genai):
    got, _ = rows(genai, scope="session")
    assert got == [expect(
        test_case_key="conv-7", model_key="gpt-4.1", input=GQ1, actual_output=GA2_TEXT, context=["Paris: rain expected."],
        conversation=[{"role": "system", "content": GSYSTEM}, {"role": "user", "content": GQ1},
                      {"role": "assistant", "content": "", "tool_calls": [GCALL]},
                      {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_w", "name": "get_weather"},
                      {"role": "assistant", "content": GA1_TEXT}, {"role": "user", "content": GQ2},
                      {"role": "assistant", "content": GA2_TEXT}],
        categories=["invoke_agent travel"], actual_duration=11.0, trace_id=G1, span_id=GA1)]


def test_model_key_by_service(openinference):
    got, _ = rows(openinference, model_key="service")
    assert [r["model_key"] for r in got] == ["claims-app"] * 3


@pytest.mark.parametrize("scope", ["span", "trace", "session"])
def test_protobuf_gzip_and_spilled_grouping_give_the_same_rows(tmp_path, openinference, scope):
    expected, _ = rows(openinference, scope=scope)
    pb = write_pb(tmp_path / "oi.pb", openinference_requests())
    assert rows(pb, scope=scope)[0] == expected
    packed = tmp_path / "oi.jsonl.gz"
    packed.write_bytes(gzip.compress(openinference.read_bytes()))
    assert rows(packed, scope=scope)[0] == expected
    # Two spans held in memory at most: every trace spills to disk and is grouped back, in the same order.
    spill = tmp_path / "spill"
    spilled = load_traces(TraceInput(files=[str(openinference)], scope=scope), spill_parent=spill, limit=2)
    assert [r.to_dict() for r in spilled.rows] == [r.to_dict() for r in load_traces(
        TraceInput(files=[str(openinference)], scope=scope)).rows]
    assert list(spill.iterdir()) == []  # the spill files are gone


def test_filters_by_kind_name_and_attribute(openinference, genai):
    got, _ = rows(openinference, scope="span", span_kinds=["retriever"])
    assert [(r["span_id"], r["input"], r.get("context")) for r in got] == [
        ("b1" * 8, Q1, DOCS1), ("b2" * 8, "", DOCS2)]
    got, _ = rows(openinference, scope="trace", span_kinds=["TOOL"])
    assert [r["test_case_key"] for r in got] == [T1]
    got, dataset = rows(openinference, scope="trace", span_names=["claims_*"], attributes={"session.id": "sess-1"})
    assert [r["test_case_key"] for r in got] == [T1, T2]
    assert dataset.summary()["traces"]["filtered_out"] == 1
    got, _ = rows(genai, scope="span", attributes={"gen_ai.usage.input_tokens": "20"})
    assert [r["span_id"] for r in got] == [GC1]
    with pytest.raises(ValueError, match="unknown span kind 'LMM'"):
        TraceInput(files=["x"], span_kinds=["LMM"])


def _kept(ids, rate, seed):
    return [i for i in ids if int.from_bytes(hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=8).digest(), "big")
            < rate * 2.0 ** 64]


def test_sampling_is_a_seeded_hash_of_the_id(tmp_path):
    from otlp_builders import request, span

    ids = [f"{n:032x}" for n in range(1, 201)]
    path = write_jsonl(tmp_path / "many.jsonl", [request([span(t, "ab" * 8, "", "q", 0, 1, {
        "openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"}) for t in ids])])
    picked, dataset = rows(path, sample_rate=0.25, seed=7)
    assert [r["trace_id"] for r in picked] == _kept(ids, 0.25, 7)
    assert 30 <= len(picked) <= 70 and dataset.summary()["traces"]["sampled_out"] == 200 - len(picked)
    assert [r["trace_id"] for r in rows(path, sample_rate=0.25, seed=7)[0]] == [r["trace_id"] for r in picked]
    wider = {r["trace_id"] for r in rows(path, sample_rate=0.5, seed=7)[0]}
    assert {r["trace_id"] for r in picked} <= wider
    assert [r["trace_id"] for r in rows(path, sample_rate=0.25, seed=8)[0]] == _kept(ids, 0.25, 8) != _kept(ids, 0.25, 7)


def test_traces_come_in_the_order_they_complete_and_a_missed_late_span_is_counted(tmp_path):
    from otlp_builders import request, span

    chain = {"openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"}
    a, b = "a" * 32, "b" * 32
    late = span(b, "b2" * 8, "b1" * 8, "late", 2, 3, chain)
    text = (json.dumps(request([span(a, "a2" * 8, "a1" * 8, "child", 1, 2, chain)])) + "\n"
            + json.dumps(request([span(b, "b1" * 8, "", "root b", 0, 4, chain)])) + "\n"
            + json.dumps(request([span(a, "a1" * 8, "", "root a", 0, 5, chain)])) + "\n"
            # The first pass finds trace ids by their key; one written with an escape is missed, so this span of
            # trace b (complete since line 2) arrives late: skipped and counted, never a second row for b.
            + json.dumps(request([late])).replace('"traceId"', '"trace\\u0049d"') + "\n")
    path = tmp_path / "order.jsonl"
    path.write_text(text, encoding="utf-8")
    for limit in (100_000, 1):
        dataset = load_traces(TraceInput(files=[str(path)]), spill_parent=tmp_path / "spill", limit=limit)
        assert [r.test_case_key for r in dataset.rows] == [b, a]  # b completes on line 2, a on line 3
        assert dataset.summary()["traces"]["spans_skipped"] == {"span after its trace": 1}
