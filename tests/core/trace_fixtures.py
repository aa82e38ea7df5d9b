"""Two hand-written production traffics, one per convention, for the trace mapping tests.

**OpenInference** (a claims agent): trace T1 (session ``sess-1``): an AGENT root, two retrievers, two
LLM calls (the first calls ``lookup_policy``), the tool span; trace T2 (same session): an AGENT root
with one LLM call; trace T3 (no session): a lone LLM call as its own root. The spans of T1 are written
in the order they end, the root last, over two requests.

**GenAI** (a travel agent): trace G1 (conversation ``conv-7``): an ``invoke_agent`` root, a
``retrieval`` span, two ``chat`` spans (the first calls ``get_weather``), the ``execute_tool`` span;
trace G2 (same conversation): an ``invoke_agent`` root whose content comes from its operation-details
event, one ``chat`` span.
"""

from __future__ import annotations

import json

from otlp_builders import request, span

T1, T2, T3 = "1" * 32, "2" * 32, "3" * 32
A1, R1, L1, TOOL1, R2, L2 = "a1" * 8, "b1" * 8, "c1" * 8, "d1" * 8, "b2" * 8, "c2" * 8
A2, L3, L4 = "a2" * 8, "c3" * 8, "c4" * 8
SYSTEM = "You are Northwind Mutual's claims assistant."
Q1 = "My bike was stolen, policy NW-1001. Am I covered?"
RESULT = "NW-1001: home contents incl. theft, deductible 100 USD."
A1_TEXT = "Yes: NW-1001 covers theft, deductible 100 USD."
Q2, A2_TEXT = "And my car?", "I can only help with home policies."


def _messages(prefix: str, messages: list[dict]) -> dict:
    out = {}
    for i, m in enumerate(messages):
        base = f"{prefix}.{i}.message"
        out[f"{base}.role"] = m["role"]
        if "content" in m:
            out[f"{base}.content"] = m["content"]
        for j, call in enumerate(m.get("tool_calls", [])):
            out[f"{base}.tool_calls.{j}.tool_call.id"] = call["id"]
            out[f"{base}.tool_calls.{j}.tool_call.function.name"] = call["name"]
            out[f"{base}.tool_calls.{j}.tool_call.function.arguments"] = json.dumps(call["arguments"])
        if "tool_call_id" in m:
            out[f"{base}.tool_call_id"] = m["tool_call_id"]
    return out


def _docs(texts: list[str]) -> dict:
    return {f"retrieval.documents.{i}.document.content": t for i, t in enumerate(texts)}


CALL = {"id": "call_1", "name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}}


def openinference_requests() -> list[dict]:
    llm = {"openinference.span.kind": "LLM"}
    r1 = span(T1, R1, A1, "retrieve_policies", 1, 2, {"openinference.span.kind": "RETRIEVER", "input.value": Q1,
                                                        **_docs(["Theft is covered under home contents.",
                                                                 "The deductible is 100 USD."])})
    l1 = span(T1, L1, A1, "ChatCompletion", 2, 4, {
        **llm, "llm.model_name": "gpt-4o", "llm.token_count.prompt": 50, "llm.token_count.completion": 10,
        "llm.cost.total": 0.0005, "session.id": "sess-1",
        **_messages("llm.input_messages", [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}]),
        **_messages("llm.output_messages", [{"role": "assistant", "tool_calls": [CALL]}])})
    tool = span(T1, TOOL1, A1, "lookup_policy", 4, 5, {
        "openinference.span.kind": "TOOL", "tool.name": "lookup_policy", "input.value": '{"policy_id": "NW-1001"}',
        "output.value": RESULT, "tool_call.id": "call_1"})
    r2 = span(T1, R2, A1, "retrieve_faq", 5, 6, {"openinference.span.kind": "RETRIEVER",
                                                   **_docs(["Claims are paid within 10 days."])})
    l2 = span(T1, L2, A1, "ChatCompletion", 6, 9, {
        **llm, "llm.model_name": "gpt-4o", "llm.cost.prompt": 0.001, "llm.cost.completion": 0.0005,
        **_messages("llm.input_messages", [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1},
                                           {"role": "assistant", "tool_calls": [CALL]},
                                           {"role": "tool", "content": RESULT, "tool_call_id": "call_1"}]),
        **_messages("llm.output_messages", [{"role": "assistant", "content": A1_TEXT}])})
    a1 = span(T1, A1, "", "claims_agent", 0, 10, {
        "openinference.span.kind": "AGENT", "input.value": json.dumps({"input": Q1}), "input.mime_type":
        "application/json", "output.value": A1_TEXT, "session.id": "sess-1"})
    l3 = span(T2, L3, A2, "ChatCompletion", 20.5, 21.5, {
        **llm, "llm.model_name": "gpt-4o-mini", "session.id": "sess-1",
        **_messages("llm.input_messages", [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q2}]),
        **_messages("llm.output_messages", [{"role": "assistant", "content": A2_TEXT}])})
    a2 = span(T2, A2, "", "claims_agent", 20, 22, {"openinference.span.kind": "AGENT", "input.value": Q2,
                                                    "output.value": A2_TEXT, "session.id": "sess-1"})
    l4 = span(T3, L4, "", "ChatCompletion", 30, 31, {
        **llm, "llm.request.model_name": "gpt-4o-mini", "llm.model_name": "gpt-4o-mini-2024-07-18",
        **_messages("llm.input_messages", [{"role": "user", "content": "Hi"}]),
        **_messages("llm.output_messages", [{"role": "assistant", "content": "Hello! How can I help?"}])})
    return [request([r1, l1, tool], "claims-app"), request([r2, l2, a1], "claims-app"),
            request([l3, a2, l4], "claims-app")]


G1, G2 = "4" * 32, "5" * 32
GA1, GR1, GC1, GT1, GC2, GA2, GC3 = ("e1" * 8, "e2" * 8, "e3" * 8, "e4" * 8, "e5" * 8, "e6" * 8, "e7" * 8)
GSYSTEM, GQ1, GA1_TEXT = "You are a travel assistant.", "Weather in Paris?", "Rainy, 57°F."
GQ2, GA2_TEXT = "Thanks. Do I need an umbrella?", "Yes, take one."
GCALL = {"type": "tool_call", "id": "call_w", "name": "get_weather", "arguments": {"location": "Paris"}}


def genai_requests() -> list[dict]:
    user1 = [{"role": "user", "parts": [{"type": "text", "content": GQ1}]}]
    system = [{"type": "text", "content": GSYSTEM}]
    root = span(G1, GA1, "", "invoke_agent travel", 0, 8, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel", "gen_ai.conversation.id": "conv-7",
        "gen_ai.input.messages": user1,  # structured (an OTLP array of kvlists)
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": GA1_TEXT}],
                                               "finish_reason": "stop"}])})
    retrieval = span(G1, GR1, GA1, "retrieval weather-kb", 1, 2, {
        "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "Paris weather",
        "gen_ai.retrieval.documents": json.dumps([{"id": "d1", "score": 0.9, "content": "Paris: rain expected."},
                                                  {"id": "d2", "score": 0.5}])})
    chat1 = span(G1, GC1, GA1, "chat gpt-4.1", 2, 4, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.response.model": "gpt-4.1-2025",
        "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 5, "gen_ai.conversation.id": "conv-7",
        "gen_ai.system_instructions": json.dumps(system), "gen_ai.input.messages": json.dumps(user1),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [GCALL], "finish_reason": "tool_call"}])})
    tool = span(G1, GT1, GA1, "execute_tool get_weather", 4, 5, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_w",
        "gen_ai.tool.call.arguments": {"location": "Paris"}, "gen_ai.tool.call.result": "rainy, 57°F"})
    chat2 = span(G1, GC2, GA1, "chat gpt-4.1", 5, 7, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.input.messages": json.dumps(user1 + [
            {"role": "assistant", "parts": [GCALL]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_w", "response": "rainy, 57°F"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": GA1_TEXT}]}])})
    details = ("gen_ai.client.inference.operation.details", {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": GQ2}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": GA2_TEXT}]}])})
    root2 = span(G2, GA2, "", "invoke_agent travel", 30, 33, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-7"}, events=[details])
    chat3 = span(G2, GC3, GA2, "chat gpt-4.1-mini", 31, 32, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1-mini",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": GQ2}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": GA2_TEXT}]}])})
    return [request([retrieval, chat1, tool, chat2], "travel-bot"), request([root, chat3, root2], "travel-bot")]
