"""A small production app traced for real: Northwind Mutual's claims assistant with OpenTelemetry spans.

The app answers a question the way a RAG agent does: it retrieves passages of the policy booklet (a
RETRIEVER span), asks a chat model through the ``openai`` client (LLM spans, made by OpenInference's
OpenAI instrumentation, ``openinference-instrumentation-openai``), runs the tools the model calls
(TOOL spans) and answers (the AGENT root span, with ``session.id``). The model is the test chat server
(tests/judge_server.py) playing the bundled offline claims agent (``sonar_core.demo.claims_agent``).

Spans go through the real OpenTelemetry SDK to real exporters: :class:`OTLPJsonFileExporter` writes
each batch with the SDK's own OTLP encoder (``opentelemetry-exporter-otlp-proto-common``) in the OTLP
JSON encoding, a request per line (the OpenTelemetry file exporter's format), and the tests add
``OTLPSpanExporter`` (``opentelemetry-exporter-otlp-proto-http``) sending to ``sonar traces serve``.

``python tests/trace_app.py OUT.jsonl`` writes the bundled demo file (sonar_core/demo/claims_traces.jsonl).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).resolve().parent))

SYSTEM = "You are Northwind Mutual's claims assistant. Answer from the policy booklet and the tools."
BOOKLET = [
    ("theft", "Home contents cover includes theft of personal property, such as bicycles, from the home."),
    ("deductible", "Each claim carries the deductible stated in the policy schedule."),
    ("claim", "A claim is filed with the policy number, the kind of loss and the amount."),
    ("water", "Water damage from burst pipes is covered; gradual leaks are not."),
    ("car", "Northwind Mutual home policies do not cover cars."),
]
POLICIES = {"NW-1001": "NW-1001: home contents incl. theft, deductible 100 USD.",
            "NW-1002": "NW-1002: home contents incl. water damage, deductible 250 USD."}
TOOLS = [
    {"type": "function", "function": {"name": "lookup_policy", "description": "What a policy covers.",
                                      "parameters": {"type": "object", "properties": {"policy_id": {"type": "string"}},
                                                     "required": ["policy_id"]}}},
    {"type": "function", "function": {"name": "file_claim", "description": "File a claim.",
                                      "parameters": {"type": "object", "properties": {
                                          "policy_id": {"type": "string"}, "kind": {"type": "string"},
                                          "amount": {"type": "number"}}}}},
]
MODEL = "claims-model"


def agent_message(body: dict[str, Any]) -> dict[str, Any]:
    """The chat server's answer: the bundled claims agent's next turn, as an OpenAI assistant message."""
    from sonar_core.demo.claims_agent import respond

    messages = body["messages"]
    turn = respond(messages, body.get("tools") or [])
    calls = turn.get("tool_calls") or []
    if not calls:
        return {"role": "assistant", "content": turn["answer"]}
    made = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{made + n}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}} for n, c in enumerate(calls)]}


def _retrieve(question: str) -> list[tuple[str, str]]:
    words = question.lower()
    return [(f"booklet-{n}", text) for n, (word, text) in enumerate(BOOKLET) if word in words][:2]


def _tool(name: str, arguments: dict[str, Any]) -> str:
    if name == "lookup_policy":
        return POLICIES.get(arguments.get("policy_id"), f"No policy {arguments.get('policy_id')}.")
    if name == "file_claim":
        return (f"Claim filed: {arguments.get('kind')} on {arguments.get('policy_id')} for "
                f"{arguments.get('amount')} USD.")
    return f"error: unknown tool {name}"


def run_app(provider, base_url: str, sessions: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """Ask every question of every session, traced by ``provider``; the answers, in order."""
    import openai
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("claims-app")
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    answers = []
    try:
        for session, questions in sessions:
            history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
            for question in questions:
                with using_session(session), tracer.start_as_current_span("claims_assistant", attributes={
                        "openinference.span.kind": "AGENT", "input.value": question, "session.id": session}) as root:
                    with tracer.start_as_current_span("retrieve_booklet", attributes={
                            "openinference.span.kind": "RETRIEVER", "input.value": question}) as retriever:
                        for n, (doc_id, text) in enumerate(_retrieve(question)):
                            retriever.set_attribute(f"retrieval.documents.{n}.document.id", doc_id)
                            retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
                    history.append({"role": "user", "content": question})
                    for _ in range(6):
                        reply = client.chat.completions.create(model=MODEL, messages=history, tools=TOOLS)
                        message = reply.choices[0].message
                        history.append(message.model_dump(exclude_none=True))
                        if not message.tool_calls:
                            break
                        for call in message.tool_calls:
                            arguments = json.loads(call.function.arguments)
                            with tracer.start_as_current_span(call.function.name, attributes={
                                    "openinference.span.kind": "TOOL", "tool.name": call.function.name,
                                    "input.value": call.function.arguments, "tool_call.id": call.id}) as tool:
                                result = _tool(call.function.name, arguments)
                                tool.set_attribute("output.value", result)
                            history.append({"role": "tool", "tool_call_id": call.id, "content": result})
                    root.set_attribute("output.value", message.content or "")
                    answers.append(message.content or "")
    finally:
        instrumentor.uninstrument()
    return answers


def _hex_ids(obj: Any) -> Any:
    """protobuf's JSON mapping (base64 bytes) to OTLP JSON (hex trace and span ids)."""
    if isinstance(obj, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    else _hex_ids(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids(v) for v in obj]
    return obj


class OTLPJsonFileExporter(SpanExporter):
    """Each batch as one OTLP JSON ``ExportTraceServiceRequest`` line, encoded by the SDK's OTLP encoder."""

    def __init__(self, path: Path) -> None:
        self.handle = open(path, "a", encoding="utf-8")

    def export(self, spans) -> SpanExportResult:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        self.handle.write(json.dumps(_hex_ids(request), ensure_ascii=False) + "\n")
        self.handle.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.handle.close()


DEMO_SESSIONS = [
    ("demo-session-1", ["My bike was stolen from my home. My policy is NW-1001. Am I covered for theft?",
                        "Please file a claim for the bike, it was worth 800 USD."]),
    ("demo-session-2", ["Is water damage from a burst pipe covered? Policy NW-1002."]),
    ("demo-session-3", ["Does my home policy cover my car?"]),
]


def main(out: str) -> None:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from judge_server import JudgeServer

    with JudgeServer(message_for=agent_message) as server:
        provider = TracerProvider(resource=Resource.create({"service.name": "claims-assistant"}))
        # Small batches: the spans reach the file over several requests, in the order they end.
        provider.add_span_processor(BatchSpanProcessor(OTLPJsonFileExporter(Path(out)), max_export_batch_size=4))
        run_app(provider, server.base_url, DEMO_SESSIONS)
        provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
