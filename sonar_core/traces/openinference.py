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

import re
from typing import Any

from .messages import (ROLES, arguments_of, first_text, int_attr, last_user_text, number_attr, reply_text, role_of,
                       text_attr, unwrap)
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
#: ``<list prefix><index>.<suffix>``: an item's attribute in one of :data:`_LISTS` (one match per key, where
#: splitting the key at its dots took five calls).
_LIST_KEY = re.compile(r"(llm\.input_messages\.|llm\.output_messages\.|llm\.prompts\.|llm\.choices\.|"
                       r"retrieval\.documents\.)(\d+)\.(.*)", re.S)
#: The model asked, else the model that answered.
_MODEL_KEYS = ("llm.request.model_name", "llm.model_name", "embedding.model_name")


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


def _list_key(key: str) -> tuple[str, int, str] | None:
    """``(list prefix, index, suffix)`` of an attribute key in one of :data:`_LISTS`, else None; remembered, as the
    same few keys recur in every span (bounded: a stream of distinct keys only refills the memory)."""
    try:
        return _KEYS[key]
    except KeyError:
        pass
    hit = _LIST_KEY.match(key) if key.startswith(_LISTS) else None
    found = None if hit is None else (hit[1], int(hit[2]), hit[3])
    if len(_KEYS) >= _KEYS_HELD:
        _KEYS.clear()
    _KEYS[key] = found
    return found


_KEYS: dict[str, tuple[str, int, str] | None] = {}
_KEYS_HELD = 4096


def _lists(attrs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every flattened list of :data:`_LISTS` in one pass over the attributes: prefix -> items by index."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in attrs.items():
        parsed = _KEYS.get(key, False)
        if parsed is False:
            parsed = _list_key(key)
        if parsed is None:
            continue
        prefix, number, suffix = parsed
        items = found.get(prefix)
        if items is None:
            found[prefix] = {number: {suffix: value}}
            continue
        item = items.get(number)
        if item is None:
            items[number] = {suffix: value}
        else:
            item[suffix] = value
    return {prefix: [items[i] for i in sorted(items)] if len(items) > 1 else list(items.values())
            for prefix, items in found.items()}


def _str(values: dict[str, Any], suffix: str, key: str) -> str:
    value = values.get(suffix)
    if value is None:
        return ""
    if type(value) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{key}.{suffix}' must be a string, got {type(value).__name__}")
    return value


def _turn(message: dict[str, Any], key: str) -> dict[str, Any]:
    role = message.get("message.role")
    role = ROLES.get(role) if type(role) is str else None  # the usual lowercase roles, else role_of's checks
    if role is None:
        role = role_of(message.get("message.role"), f"{key}.message.role")
    content = message.get("message.content")
    if type(content) is not str:
        content = _str(message, "message.content", key)
    size = len(message)
    if not content and size > 1:
        parts = _indexed(message.items(), "message.contents.")
        content = "\n".join(_str(part, "message_content.text", f"{key}.message.contents") for part in parts
                            if part.get("message_content.type", "text") == "text" and part.get("message_content.text"))
    turn: dict[str, Any] = {"role": role, "content": content}
    if size > 2:
        calls = []
        for n, call in enumerate(_indexed(message.items(), "message.tool_calls.")):
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
    found = lists.get(prefix)
    return tuple([_turn(message, f"{prefix}{n}") for n, message in enumerate(found)]) if found else ()


def _documents(lists: dict[str, list]) -> tuple:
    docs = []
    for n, document in enumerate(lists.get("retrieval.documents.", ())):
        content = _str(document, "document.content", f"retrieval.documents.{n}")
        if content:
            docs.append(content)
    return tuple(docs)


def extract(span: RawSpan) -> tuple:
    """The content of an OpenInference span: :class:`~.spans.SpanInfo`'s fields from ``kind`` to ``cost``
    (:data:`~.spans.CONTENT_FIELDS`), in order."""
    attrs = span.attributes
    kind = attrs.get(KIND_KEY)
    if kind is None:
        raise SpanSkip("no span kind", f"OpenInference attributes but no '{KIND_KEY}'")
    if type(kind) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{KIND_KEY}' must be a string")
    if kind not in _KINDS:
        kind = kind.strip().upper()
        if kind not in _KINDS:
            raise SpanSkip("unknown span kind", f"'{KIND_KEY}' is {kind[:40]!r}")
    get = attrs.get
    messages = reply = documents = ()
    tool = None
    if kind == "LLM":
        lists = _lists(attrs)
        messages = _turns(lists, "llm.input_messages.")
        reply = _turns(lists, "llm.output_messages.")
        if not messages:
            messages = tuple({"role": "user", "content": _str(p, "prompt.text", "llm.prompts")}
                             for p in lists.get("llm.prompts.", ()))
        if not reply:
            reply = tuple({"role": "assistant", "content": _str(c, "completion.text", "llm.choices")}
                          for c in lists.get("llm.choices.", ())[:1])
    elif kind == "RETRIEVER":
        lists = _lists(attrs)
    raw_input = get("input.value")
    if type(raw_input) is not str:
        raw_input = text_attr(attrs, "input.value")
    raw_output = get("output.value")
    if type(raw_output) is not str:
        raw_output = text_attr(attrs, "output.value")
    question = last_user_text(messages) if messages else unwrap(raw_input)
    answer = reply_text(reply) if reply else unwrap(raw_output, output=True)
    if kind == "TOOL":
        call_id = text_attr(attrs, "tool_call.id") or text_attr(attrs, "tool.id")
        tool = (text_attr(attrs, "tool.name") or span.name, arguments_of(raw_input), raw_output, call_id)
    cost = get("llm.cost.total")
    if cost is not None or "llm.cost.prompt" in attrs or "llm.cost.completion" in attrs:
        cost = number_attr(attrs, "llm.cost.total")
        if cost is None:
            parts = [number_attr(attrs, "llm.cost.prompt"), number_attr(attrs, "llm.cost.completion")]
            cost = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    model = first_text(attrs, _MODEL_KEYS)
    session = get("session.id")
    if type(session) is not str:
        session = text_attr(attrs, "session.id")
    if kind == "RETRIEVER":
        documents = _documents(lists)
    tokens_in, tokens_out = get("llm.token_count.prompt"), get("llm.token_count.completion")
    if tokens_in is not None:
        tokens_in = int_attr(attrs, "llm.token_count.prompt")
    if tokens_out is not None:
        tokens_out = int_attr(attrs, "llm.token_count.completion")
    return kind, model, session, question, answer, messages, reply, documents, tool, tokens_in, tokens_out, cost
