"""Real instrumentation end to end: the claims app (tests/trace_app.py) traced by the OpenTelemetry SDK and
OpenInference's OpenAI instrumentation, its spans exported to an OTLP JSON file and, over OTLP/HTTP
(protobuf, gzip), to ``sonar traces serve``; both map to the rows written here by hand; a run over them
writes its verdicts back as spans that protobuf's own parser reads and that link to the judged spans;
and a resumed run asks the judge nothing again.
"""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from otlp_builders import from_otlp_json
from sonar_core import names
from sonar_core.traces.load import load_traces
from sonar_core.traces.receiver import Receiver
from sonar_core.traces.spec import TraceInput

pytest.importorskip("openinference.instrumentation.openai")
from trace_app import DEMO_SESSIONS, SYSTEM, OTLPJsonFileExporter, agent_message, run_app  # noqa: E402

Q1, Q2 = DEMO_SESSIONS[0][1]
(Q3,), (Q4,) = DEMO_SESSIONS[1][1], DEMO_SESSIONS[2][1]
POLICY_1 = "NW-1001: home contents incl. theft, deductible 100 USD."
POLICY_2 = "NW-1002: home contents incl. water damage, deductible 250 USD."
CLAIM = "Claim filed: theft on NW-1001 for 1001 USD."  # the agent's planted weakness: the policy's digits


def _call(name, arguments, call_id, result):
    return [{"role": "assistant", "content": "", "tool_calls": [{"name": name, "arguments": arguments, "id": call_id}]},
            {"role": "tool", "content": result, "tool_call_id": call_id, "name": name}]


SYS = {"role": "system", "content": SYSTEM}
#: The trace rows, written out from the app's and the agent's documented behaviour.
EXPECTED = [
    {"input": Q1, "actual_output": f"According to policy NW-1001: {POLICY_1}",
     "context": ["Home contents cover includes theft of personal property, such as bicycles, from the home."],
     "conversation": [SYS, {"role": "user", "content": Q1}, *_call("lookup_policy", {"policy_id": "NW-1001"}, "call_0", POLICY_1),
                      {"role": "assistant", "content": f"According to policy NW-1001: {POLICY_1}"}]},
    {"input": Q2, "actual_output": f"Done: {CLAIM}",
     "context": ["A claim is filed with the policy number, the kind of loss and the amount."],
     "conversation": [SYS, {"role": "user", "content": Q2},
                      *_call("file_claim", {"policy_id": "NW-1001", "kind": "theft", "amount": 1001}, "call_1", CLAIM),
                      {"role": "assistant", "content": f"Done: {CLAIM}"}]},
    {"input": Q3, "actual_output": f"According to policy NW-1002: {POLICY_2}",
     "context": ["Water damage from burst pipes is covered; gradual leaks are not."],
     "conversation": [SYS, {"role": "user", "content": Q3}, *_call("lookup_policy", {"policy_id": "NW-1002"}, "call_0", POLICY_2),
                      {"role": "assistant", "content": f"According to policy NW-1002: {POLICY_2}"}]},
    {"input": Q4, "actual_output": "Could you give me your policy number (it starts with NW-)?",
     "context": ["Northwind Mutual home policies do not cover cars."], "conversation": []},
]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The app run once: its spans in an OTLP JSON file and, through the OTLP/HTTP exporter, in a receiver's folder."""
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    from judge_server import JudgeServer

    folder = tmp_path_factory.mktemp("traced")
    receiver = Receiver(folder / "spans", port=0, say=lambda line: None)
    serving = threading.Thread(target=receiver.serve_forever, daemon=True)
    serving.start()
    try:
        with JudgeServer(message_for=agent_message) as server:
            provider = TracerProvider(resource=Resource.create({"service.name": "claims-assistant"}))
            provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(folder / "spans.jsonl")))
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
                endpoint=f"{receiver.address}/v1/traces", compression=Compression.Gzip, timeout=10)))
            answers = run_app(provider, server.base_url, DEMO_SESSIONS)
            provider.shutdown()
    finally:
        receiver.shutdown()
        serving.join(timeout=10)
    return folder, receiver.summary(), answers


def _roots(path) -> dict[str, str]:
    """trace id -> root span id, read from the file itself."""
    roots = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for group in json.loads(line)["resourceSpans"]:
            for scope in group["scopeSpans"]:
                for span in scope["spans"]:
                    if not span.get("parentSpanId"):
                        roots[span["traceId"]] = span["spanId"]
    return roots


def test_the_instrumented_spans_map_to_the_expected_rows(traced):
    folder, received, answers = traced
    assert answers == [row["actual_output"] for row in EXPECTED]
    dataset = load_traces(TraceInput(files=[str(folder / "spans.jsonl")]))
    assert [{"input": r.input, "actual_output": r.actual_output, "context": r.context, "conversation": r.conversation}
            for r in dataset.rows] == EXPECTED
    roots = _roots(folder / "spans.jsonl")
    assert {r.trace_id: r.span_id for r in dataset.rows} == roots
    assert all(r.test_case_key == r.trace_id and r.model_key == "claims-model" and r.actual_duration > 0
               for r in dataset.rows)
    traces = dataset.summary()["traces"]
    assert (traces["spans_read"], traces["spans_skipped"], traces["lines_skipped"]) == (18, {}, {})
    # Span scope: the 7 LLM calls the instrumentation recorded; a call that only asks for a tool answers with it.
    calls = load_traces(TraceInput(files=[str(folder / "spans.jsonl")], scope="span")).rows
    assert [c.actual_output for c in calls][:2] == ['lookup_policy({"policy_id":"NW-1001"})',
                                                   f"According to policy NW-1001: {POLICY_1}"]
    assert len(calls) == 7 and {c.model_key for c in calls} == {"claims-model"}


def test_the_receiver_got_the_same_spans_from_the_otlp_exporter(traced):
    folder, received, _ = traced
    assert received["spans"] == 18 and received["rejected_requests"] == {} and received["accepted_requests"] >= 1
    assert all(name.endswith(".pb") for name in received["files"])  # the exporter speaks protobuf
    from_file = load_traces(TraceInput(files=[str(folder / "spans.jsonl")], scope="session"))
    from_receiver = load_traces(TraceInput(files=[str(folder / "spans")], scope="session"))
    assert [r.to_dict() for r in from_receiver.rows] == [r.to_dict() for r in from_file.rows]
    assert [r.test_case_key for r in from_file.rows] == ["demo-session-1", "demo-session-2", "demo-session-3"]


def _run(traced, tmp_path, server, **extra):
    import sonar_core
    from judge_server import write_llm_configs

    folder, _, _ = traced
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    return sonar_core.run(traces=[folder / "spans.jsonl"], evaluators=["pii_leakage", "contact_information"],
                          llm_configs=configs, llm_cache=tmp_path / "cache.sqlite", calibrate=False,
                          output_dir=tmp_path / "reports", run_id="prod", **extra)


def test_verdicts_go_back_as_spans_linked_to_the_judged_spans(traced, tmp_path):
    from judge_server import JudgeServer

    folder, _, _ = traced
    roots = _roots(folder / "spans.jsonl")
    with JudgeServer(script=[("Claim filed", "present")], default="absent") as server:
        result = _run(traced, tmp_path, server)
        assert result.status == "success"
        assert server.calls == 4
    lines = (result.run_dir / names.ANNOTATIONS_JSONL).read_text(encoding="utf-8").splitlines()
    carriers = [span for line in lines for group in from_otlp_json(line).resource_spans
                for scope in group.scope_spans for span in scope.spans]
    assert len(carriers) == 8  # 4 traces x 2 evaluators
    seen = {}
    for carrier in carriers:
        (link,) = carrier.links
        attrs = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in carrier.attributes}
        assert attrs["openinference.span.kind"] == "EVALUATOR"
        assert roots[link.trace_id.hex()] == link.span_id.hex()  # the judged trace's root span
        (event,) = carrier.events
        event_attrs = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in event.attributes}
        assert event.name == "gen_ai.evaluation.result"
        assert event_attrs["gen_ai.evaluation.name"] == attrs["trace.annotations.0.annotation.name"]
        assert event_attrs["gen_ai.evaluation.score.label"] == attrs["trace.annotations.0.annotation.label"]
        seen[(link.trace_id.hex(), attrs["trace.annotations.0.annotation.name"])] = (
            attrs["trace.annotations.0.annotation.score"], attrs["trace.annotations.0.annotation.label"],
            attrs["trace.annotations.0.annotation.annotator_kind"])
    trace_ids = list(roots)
    claim_trace = [t for t in trace_ids if seen[(t, "contact_information")][1] == "fail"]
    assert len(claim_trace) == 1 and seen[(claim_trace[0], "contact_information")] == (0.0, "fail", "LLM")
    assert sorted(v for k, v in seen.items() if k[1] == "pii_leakage") == [(1.0, "pass", "CODE")] * 4
    # The flat table: Phoenix's span-annotation columns, read by pandas as it is.
    import pandas as pd

    table = pd.read_csv(result.run_dir / names.ANNOTATIONS_CSV, dtype={"span_id": str, "trace_id": str})
    assert list(table.columns)[:8] == ["span_id", "trace_id", "name", "annotator_kind", "score", "label", "explanation",
                                       "identifier"]
    judged = table[(table.name == "contact_information") & (table.label == "fail")]
    assert list(judged.span_id) == [roots[claim_trace[0]]] and list(judged.scope) == ["trace"]
    assert judged.explanation.iloc[0].startswith("judge test-judge:")
    # Any OTLP/HTTP receiver takes a line as a request body.
    receiver = Receiver(tmp_path / "back", port=0, say=lambda line: None)
    serving = threading.Thread(target=receiver.serve_forever, daemon=True)
    serving.start()
    try:
        for line in lines:
            request = urllib.request.Request(f"{receiver.address}/v1/traces", data=line.encode("utf-8"),
                                             headers={"Content-Type": "application/json"})
            assert urllib.request.urlopen(request, timeout=10).status == 200
    finally:
        receiver.shutdown()
    assert receiver.summary()["spans"] == 8


def test_a_resumed_trace_run_asks_nothing_again(traced, tmp_path):
    import sonar_core
    from judge_server import JudgeServer

    with JudgeServer(script=[("Claim filed", "present")], default="absent") as server:
        first = _run(traced, tmp_path, server)
        before = (first.run_dir / names.ANNOTATIONS_JSONL).read_bytes()
        judged = next(first.run_dir.glob("explainer_*ContactInformation*"))
        (judged / names.DONE_MARKER).unlink()  # as if the run had been killed while this evaluator scored
        server.reset()
        resumed = sonar_core.resume(first.run_dir)
        assert resumed.status == "success" and server.calls == 0  # every verdict came from the cache
    events = [json.loads(line) for line in (first.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
    assert [e["evaluator"] for e in events if e["message"] == "skipping finished evaluator"] == ["pii_leakage"]
    assert (first.run_dir / names.ANNOTATIONS_JSONL).read_bytes() == before


def test_the_bundled_demo_file_is_the_same_app_traced(tmp_path):
    """sonar_core/demo/claims_traces.jsonl (made by ``python tests/trace_app.py``) maps to the same rows, and a run
    over it, as the README shows, writes a verdict back for every trace."""
    import sonar_core
    from sonar_core.demo import __file__ as demo

    demo_file = __import__("pathlib").Path(demo).parent / "claims_traces.jsonl"
    assert len(demo_file.read_text(encoding="utf-8").splitlines()) > 1  # spans over several export batches
    dataset = load_traces(TraceInput(files=[str(demo_file)]))
    assert [{"input": r.input, "actual_output": r.actual_output, "context": r.context, "conversation": r.conversation}
            for r in dataset.rows] == EXPECTED
    result = sonar_core.run(traces=demo_file, evaluators=["pii_leakage"], output_dir=tmp_path, run_id="demo")
    table = (result.run_dir / names.ANNOTATIONS_CSV).read_text(encoding="utf-8").splitlines()
    assert len(table) == 1 + 4 and {r.span_id for r in dataset.rows} == {line.split(",")[0] for line in table[1:]}
