"""OpenInference spans (Arize-ai/openinference, ``spec/semantic_conventions.md``) read into a span's content.

Attributes read (lists are flattened with zero-based indices, ``<prefix>.<i>.<suffix>``):

====================================  ==============================================================
``openinference.span.kind``           LLM, EMBEDDING, CHAIN, RETRIEVER, RERANKER, TOOL, AGENT, GUARDRAIL,
                                      EVALUATOR, PROMPT (required: a span without it is skipped)
``input.value``, ``output.value``     the span's input and output (a JSON wrapper around one text unwrapped)
``llm.input_messages.<i>.message.*``  ``role``, ``content`` (or ``contents.<j>.message_content.text``),
``llm.output_messages.<i>.message.*`` ``tool_calls.<j>.tool_call.{id, function.name, function.arguments}``,
                                      ``tool_call_id``, ``name``
``llm.prompts.<i>.prompt.text``       legacy completions: the prompts (user turns) and the choices
``llm.choices.<i>.completion.text``
``retrieval.documents.<i>.document.content``  a retriever's documents
``tool.name``                         a tool span's tool; its arguments are ``input.value``, its result
                                      ``output.value``, its call id ``tool_call.id`` (or ``tool.id``)
``llm.request.model_name``,           the model asked, else the model that answered
``llm.model_name``
``llm.token_count.prompt`` / ``.completion``, ``llm.cost.total`` (else ``.prompt`` + ``.completion``),
``session.id``
====================================  ==============================================================
"""

from __future__ import annotations

from typing import Any

from .messages import (arguments_of, int_attr, last_user_text, number_attr, reply_text, role_of, text_attr,
                       unwrap)
from .spans import RawSpan, SpanSkip

__all__ = ["extract", "KIND_KEY", "is_openinference"]

KIND_KEY = "openinference.span.kind"
_KINDS = frozenset({"LLM", "EMBEDDING", "CHAIN", "RETRIEVER", "RERANKER", "TOOL", "AGENT", "GUARDRAIL", "EVALUATOR",
                    "PROMPT"})
#: Attribute prefixes that mark a span as OpenInference's even when its kind is missing.
_MARKS = ("input.value", "output.value", "llm.", "retrieval.documents", "tool.name", "openinference.")


def is_openinference(attrs: dict[str, Any]) -> bool:
    """Whether the span has OpenInference's kind, or attributes only OpenInference writes."""
    return KIND_KEY in attrs or any(key.startswith(_MARKS) for key in attrs)


#: The flattened lists read, by the name they are grouped under.
_LISTS = ("llm.input_messages.", "llm.output_messages.", "llm.prompts.", "llm.choices.", "retrieval.documents.")


def _indexed(items, prefix: str) -> list[dict[str, Any]]:
    """``prefix.<i>.<suffix> = value`` pairs as a list of ``{suffix: value}``, by index."""
    found: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key, value in items:
        if key.startswith(prefix):
            index, dot, suffix = key[size:].partition(".")
            if dot and index.isdigit():
                found.setdefault(int(index), {})[suffix] = value
    return [found[i] for i in sorted(found)]


def _lists(attrs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every flattened list of :data:`_LISTS` in one pass over the attributes: prefix -> items by index."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in attrs.items():
        if key.startswith(_LISTS):
            head, _, rest = key.partition(".")
            name, _, rest = rest.partition(".")
            index, dot, suffix = rest.partition(".")
            if dot and index.isdigit():
                found.setdefault(f"{head}.{name}.", {}).setdefault(int(index), {})[suffix] = value
    return {prefix: [items[i] for i in sorted(items)] for prefix, items in found.items()}


def _str(values: dict[str, Any], suffix: str, key: str) -> str:
    value = values.get(suffix)
    if value is None:
        return ""
    if type(value) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{key}.{suffix}' must be a string, got {type(value).__name__}")
    return value


def _turn(message: dict[str, Any], key: str) -> dict[str, Any]:
    role = role_of(message.get("message.role"), f"{key}.message.role")
    content = _str(message, "message.content", key)
    if not content and len(message) > 1:
        parts = _indexed(message.items(), "message.contents.")
        content = "\n".join(_str(part, "message_content.text", f"{key}.message.contents") for part in parts
                            if part.get("message_content.type", "text") == "text" and part.get("message_content.text"))
    turn: dict[str, Any] = {"role": role, "content": content}
    calls = []
    for n, call in enumerate(_indexed(message.items(), "message.tool_calls.") if len(message) > 2 else ()):
        where = f"{key}.message.tool_calls.{n}"
        name = _str(call, "tool_call.function.name", where)
        if not name:
            continue
        made = {"name": name, "arguments": arguments_of(call.get("tool_call.function.arguments"))}
        if call_id := _str(call, "tool_call.id", where):
            made["id"] = call_id
        calls.append(made)
    if calls and role == "assistant":
        turn["tool_calls"] = calls
    if role == "tool":
        if call_id := _str(message, "message.tool_call_id", key):
            turn["tool_call_id"] = call_id
        if name := _str(message, "message.name", key):
            turn["name"] = name
    return turn


def _turns(lists: dict[str, list], prefix: str) -> tuple:
    return tuple(_turn(message, f"{prefix}{n}") for n, message in enumerate(lists.get(prefix, ())))


def _documents(lists: dict[str, list]) -> tuple:
    docs = []
    for n, document in enumerate(lists.get("retrieval.documents.", ())):
        content = _str(document, "document.content", f"retrieval.documents.{n}")
        if content:
            docs.append(content)
    return tuple(docs)


def extract(span: RawSpan) -> dict[str, Any]:
    """The content of an OpenInference span, as :class:`~.spans.SpanInfo` fields."""
    attrs = span.attributes
    kind = attrs.get(KIND_KEY)
    if kind is None:
        raise SpanSkip("no span kind", f"OpenInference attributes but no '{KIND_KEY}'")
    if type(kind) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{KIND_KEY}' must be a string")
    kind = kind.strip().upper()
    if kind not in _KINDS:
        raise SpanSkip("unknown span kind", f"'{KIND_KEY}' is {kind[:40]!r}")
    lists = _lists(attrs) if kind in ("LLM", "RETRIEVER") else {}
    messages = reply = ()
    if kind == "LLM":
        messages = _turns(lists, "llm.input_messages.")
        reply = _turns(lists, "llm.output_messages.")
        if not messages:
            messages = tuple({"role": "user", "content": _str(p, "prompt.text", "llm.prompts")}
                             for p in lists.get("llm.prompts.", ()))
        if not reply:
            reply = tuple({"role": "assistant", "content": _str(c, "completion.text", "llm.choices")}
                          for c in lists.get("llm.choices.", ())[:1])
    raw_input = text_attr(attrs, "input.value")
    raw_output = text_attr(attrs, "output.value")
    question = last_user_text(messages) if messages else unwrap(raw_input)
    answer = reply_text(reply) if reply else unwrap(raw_output, output=True)
    tool = None
    if kind == "TOOL":
        call_id = text_attr(attrs, "tool_call.id") or text_attr(attrs, "tool.id")
        tool = (text_attr(attrs, "tool.name") or span.name, arguments_of(raw_input), raw_output, call_id)
    cost = number_attr(attrs, "llm.cost.total")
    if cost is None:
        parts = [number_attr(attrs, "llm.cost.prompt"), number_attr(attrs, "llm.cost.completion")]
        cost = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    return {
        "kind": kind,
        "model": text_attr(attrs, "llm.request.model_name") or text_attr(attrs, "llm.model_name")
        or text_attr(attrs, "embedding.model_name"),
        "session": text_attr(attrs, "session.id"),
        "input": question, "output": answer, "messages": messages, "reply": reply,
        "documents": _documents(lists) if kind == "RETRIEVER" else (),
        "tool": tool,
        "tokens_in": int_attr(attrs, "llm.token_count.prompt"),
        "tokens_out": int_attr(attrs, "llm.token_count.completion"),
        "cost": cost,
    }
