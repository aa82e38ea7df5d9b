"""OpenTelemetry GenAI spans (semantic conventions for generative AI, in development) read into a span's content.

``gen_ai.operation.name`` gives the kind: ``chat``, ``text_completion``, ``generate_content`` → LLM;
``embeddings`` → EMBEDDING; ``execute_tool`` → TOOL; ``invoke_agent``, ``create_agent`` → AGENT;
``retrieval`` → RETRIEVER; any other operation → CHAIN. A span with ``gen_ai.*`` attributes but no
operation is skipped ("no span kind").

Messages are ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (structured, or their JSON text):
``[{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", "id", "name", "arguments"},
{"type": "tool_call_response", "id", "response"}]}]``, with ``gen_ai.system_instructions`` as the
system turn; when the span has none, they are read from its ``gen_ai.client.inference.operation.details``
event. A tool span gives ``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``
and ``gen_ai.tool.call.id``; a retrieval span ``gen_ai.retrieval.query.text`` and the ``content`` (or
``text``) of each of ``gen_ai.retrieval.documents``. Also read: ``gen_ai.request.model`` (else
``gen_ai.response.model``), ``gen_ai.usage.input_tokens`` / ``output_tokens``, ``gen_ai.conversation.id``.
The conventions record no cost.
"""

from __future__ import annotations

from typing import Any

from .messages import (arguments_of, as_text, first_text, int_attr, last_user_text, reply_text, role_of, structured,
                       text_attr, unwrap)
from .spans import RawSpan, SpanSkip

__all__ = ["extract", "is_genai", "OPERATION_KEY"]

OPERATION_KEY = "gen_ai.operation.name"
_KINDS = {"chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "embeddings": "EMBEDDING",
          "execute_tool": "TOOL", "invoke_agent": "AGENT", "create_agent": "AGENT", "retrieval": "RETRIEVER"}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
#: The model asked, else the model that answered.
_MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model")
_CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")


def is_genai(attrs: dict[str, Any]) -> bool:
    return any(key.startswith("gen_ai.") for key in attrs)


def _parts(message: dict[str, Any], key: str) -> list:
    parts = message.get("parts")
    if parts is None and isinstance(message.get("content"), str):  # the older {"role", "content"} form
        return [{"type": "text", "content": message["content"]}]
    if not isinstance(parts, list):
        raise SpanSkip("wrong attribute type", f"attribute '{key}': a message's 'parts' must be a list")
    return parts


def _turns(value: Any, key: str) -> list[dict[str, Any]]:
    messages = structured(value, key)
    if not isinstance(messages, list):
        raise SpanSkip("wrong attribute type", f"attribute '{key}' must be a list of messages")
    turns: list[dict[str, Any]] = []
    for n, message in enumerate(messages):
        if not isinstance(message, dict):
            raise SpanSkip("wrong attribute type", f"attribute '{key}': message {n} is not an object")
        role = role_of(message.get("role"), f"{key}[{n}].role")
        texts, calls, responses = [], [], []
        for part in _parts(message, key):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif kind == "tool_call" and isinstance(part.get("name"), str) and part["name"]:
                call = {"name": part["name"], "arguments": arguments_of(part.get("arguments"))}
                if isinstance(part.get("id"), str) and part["id"]:
                    call["id"] = part["id"].strip()
                calls.append(call)
            elif kind == "tool_call_response":
                responses.append((part.get("id"), as_text(part.get("response", part.get("result")))))
        if responses:
            for call_id, text in responses:
                turn = {"role": "tool", "content": text}
                if isinstance(call_id, str) and call_id.strip():
                    turn["tool_call_id"] = call_id.strip()
                turns.append(turn)
            continue
        turn = {"role": role, "content": "\n".join(texts)}
        if calls and role == "assistant":
            turn["tool_calls"] = calls
        turns.append(turn)
    return turns


def _system(value: Any) -> list[dict[str, Any]]:
    parts = structured(value, "gen_ai.system_instructions")
    if isinstance(parts, str):
        return [{"role": "system", "content": parts}]
    if not isinstance(parts, list):
        raise SpanSkip("wrong attribute type", "attribute 'gen_ai.system_instructions' must be a list of parts")
    texts = [p["content"] for p in parts if isinstance(p, dict) and isinstance(p.get("content"), str)]
    return [{"role": "system", "content": "\n".join(texts)}] if texts else []


def _documents(value: Any) -> tuple:
    docs = structured(value, "gen_ai.retrieval.documents")
    if not isinstance(docs, list):
        raise SpanSkip("wrong attribute type", "attribute 'gen_ai.retrieval.documents' must be a list")
    texts = []
    for doc in docs:
        if isinstance(doc, dict):
            text = doc.get("content", doc.get("text"))
            if isinstance(text, str) and text:
                texts.append(text)
    return tuple(texts)


def _content(span: RawSpan) -> dict[str, Any]:
    """The span's message attributes, else its operation-details event's."""
    attrs = span.attributes
    if any(key in attrs for key in _CONTENT_KEYS):
        return attrs
    for name, event_attrs in span.events:
        if name == _DETAILS_EVENT:
            return event_attrs
    return attrs


def extract(span: RawSpan) -> tuple:
    """The content of a GenAI span: :class:`~.spans.SpanInfo`'s fields from ``kind`` to ``cost``, in order."""
    attrs = span.attributes
    operation = attrs.get(OPERATION_KEY)
    if operation is None:
        raise SpanSkip("no span kind", f"gen_ai.* attributes but no '{OPERATION_KEY}'")
    if type(operation) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{OPERATION_KEY}' must be a string")
    kind = _KINDS.get(operation.strip().lower(), "CHAIN")
    content = _content(span)
    messages: list[dict[str, Any]] = []
    reply: list[dict[str, Any]] = []
    if content.get("gen_ai.system_instructions") is not None:
        messages += _system(content["gen_ai.system_instructions"])
    if content.get("gen_ai.input.messages") is not None:
        messages += _turns(content["gen_ai.input.messages"], "gen_ai.input.messages")
    if content.get("gen_ai.output.messages") is not None:
        reply = _turns(content["gen_ai.output.messages"], "gen_ai.output.messages")[:1]
    tool = None
    question, answer = last_user_text(messages), reply_text(reply)
    if kind == "TOOL":
        arguments = attrs.get("gen_ai.tool.call.arguments")
        result = as_text(attrs.get("gen_ai.tool.call.result"))
        tool = (text_attr(attrs, "gen_ai.tool.name") or span.name, arguments_of(arguments),
                result, text_attr(attrs, "gen_ai.tool.call.id"))
        question, answer = as_text(arguments), result
    documents = ()
    if kind == "RETRIEVER":
        question = text_attr(attrs, "gen_ai.retrieval.query.text") or question
        if attrs.get("gen_ai.retrieval.documents") is not None:
            documents = _documents(attrs["gen_ai.retrieval.documents"])
    model = first_text(attrs, _MODEL_KEYS)
    session = text_attr(attrs, "gen_ai.conversation.id")
    return (kind, model, session, unwrap(question), unwrap(answer, output=True), tuple(messages), tuple(reply),
            documents, tool, int_attr(attrs, "gen_ai.usage.input_tokens"), int_attr(attrs, "gen_ai.usage.output_tokens"),
            None)
