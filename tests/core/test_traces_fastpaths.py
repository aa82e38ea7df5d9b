"""The loader's fast paths read spans exactly as the plain, general paths do (docs/traces.md, Speed and memory).

Each fast path is checked against the general path beside it, on the bundled demo trace file and on hostile
input (a seeded mix of missing fields, attributes of odd types, odd list keys, lone surrogates, non-UTF-8 bytes,
cut lines, trace-id keys spelled the other ways):

* the first pass's byte search for trace ids against the regular expression it stands in for;
* the typed decoding of the usual OTLP JSON line (:mod:`sonar_core.traces.otlp_fast`) against the general reading
  of the same line, event for event, and on lines built to send it back to the general reading;
* OpenInference's reading (a cache of parsed list keys, type checks skipped for plain strings) against the
  plain reading, :func:`plain_extract` below (the reading as it was before the fast paths);
* rows and counts mapped in worker processes, and through the standard JSON parser, against rows and counts
  mapped in the loading process through orjson;
* workers end with the load: on Ctrl-C, and started from a script that has no ``__main__`` guard.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import hashlib
import json
import math
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sonar_core.traces import mapping, openinference, otlp_fast
from sonar_core.traces.files import _TRACE_ID, _line_ids
from sonar_core.traces.load import load_traces
from sonar_core.traces.mapping import raw_spans
from sonar_core.traces.messages import (arguments_of, int_attr, last_user_text, number_attr, reply_text, role_of,
                                        text_attr, unwrap)
from sonar_core.traces.openinference import KIND_KEY, _documents, _indexed, _str, is_openinference
from sonar_core.traces.spans import SpanSkip, Tally
from sonar_core.traces.spec import TraceInput

DEMO = Path(__file__).resolve().parents[2] / "sonar_core" / "demo" / "claims_traces.jsonl"
ROOT = Path(__file__).resolve().parents[2]

ODD_VALUES = [None, {}, {"intValue": "7"}, {"intValue": 7}, {"intValue": "x"}, {"doubleValue": 1.5}, {"doubleValue": 3.0},
              {"doubleValue": "NaN"}, {"doubleValue": -1.0}, {"boolValue": True}, {"bytesValue": "AAE="},
              {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}},
              {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}, {"stringValue": 5},
              {"stringValue": ""}, {"stringValue": " LLM "}, {"stringValue": "llm"}, {"stringValue": "Retriever"},
              {"stringValue": "BOGUS"}, {"stringValue": "Human"}, {"stringValue": " user"}, {"stringValue": "TOOL"},
              {"stringValue": "\ud800 lone"}, {"stringValue": '{"input": "wrapped"}'}, {"stringValue": "[1,2"},
              {"weird": 1}, "not an AnyValue"]
ODD_KEYS = ["openinference.span.kind", "input.value", "output.value", "session.id", "llm.model_name",
            "llm.request.model_name", "embedding.model_name", "llm.token_count.prompt", "llm.token_count.completion",
            "llm.cost.total", "llm.cost.prompt", "llm.cost.completion", "llm.input_messages.0.message.role",
            "llm.input_messages.0.message.content", "llm.input_messages.1.message.role",
            "llm.input_messages.\u0663.message.role", "llm.input_messages.\u00b2.message.role",
            "llm.input_messages.01.message.content", "llm.input_messages..message.role", "llm.input_messages.0",
            "llm.input_messages.0.", "llm.output_messages.0.message.role", "llm.output_messages.0.message.content",
            "llm.output_messages.0.message.contents.0.message_content.text",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
            "llm.prompts.0.prompt.text", "llm.choices.0.completion.text", "retrieval.documents.0.document.content",
            "retrieval.documents.7.document.content", "tool.name", "tool_call.id", "tool.id",
            "llm.input_messages.0.message.tool_call_id", "llm.input_messages.0.message.name"]


def _mutate(span: dict, rng: random.Random) -> None:
    luck = rng.random()
    if luck < 0.1 and span:
        span.pop(rng.choice(sorted(span)))
    elif luck < 0.15:
        span[rng.choice(["traceId", "spanId", "parentSpanId", "startTimeUnixNano", "name", "attributes"])] = \
            rng.choice([None, 5, "", "zz", "0" * 32, [], {}, "12", True])
    elif luck < 0.2:
        span["trace_id"] = span.pop("traceId", None)
    attrs = span.get("attributes")
    if not isinstance(attrs, list):
        return
    for _ in range(rng.randrange(6)):
        what = rng.random()
        if what < 0.4:
            attrs.append({"key": rng.choice(ODD_KEYS), "value": copy.deepcopy(rng.choice(ODD_VALUES))})
        elif what < 0.55 and attrs:
            attrs.pop(rng.randrange(len(attrs)))
        elif what < 0.6 and attrs:
            attrs[rng.randrange(len(attrs))] = rng.choice([{"key": 5, "value": {}}, {"value": {"stringValue": "a"}}, "x"])
        elif what < 0.85 and attrs and isinstance(attrs[0], dict):
            rng.choice([a for a in attrs if isinstance(a, dict)])["value"] = copy.deepcopy(rng.choice(ODD_VALUES))
        else:
            rng.shuffle(attrs)


def hostile_file(path: Path, seed: int = 39, copies: int = 12) -> Path:
    """The demo's requests, each written ``copies`` times with mutations (seeded), then odd lines."""
    rng = random.Random(seed)
    requests = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    with open(path, "wb") as handle:
        for _ in range(copies):
            for request in requests:
                mutated = copy.deepcopy(request)
                for group in mutated["resourceSpans"]:
                    for scope in group["scopeSpans"]:
                        for span in scope["spans"]:
                            if rng.random() < 0.7:
                                _mutate(span, rng)
                raw = json.dumps(mutated, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
                luck = rng.random()
                if luck < 0.05:
                    raw = raw.replace(b"the", b"th\xff", 1)  # not UTF-8
                elif luck < 0.1:
                    raw = raw.replace(b'"traceId"', b'"traceid"', 1)
                elif luck < 0.15:
                    raw = raw.replace(b'"traceId": "', b'"traceId" : "', 1)
                elif luck < 0.18:
                    raw = raw[:rng.randrange(len(raw))]
                handle.write(raw + b"\n")
        handle.write(b"[1, 2]\n   \n")
    return path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    return hostile_file(tmp_path_factory.mktemp("hostile") / "hostile.jsonl")


def test_the_hostile_file_holds_what_it_should(hostile):
    """The faults the comparisons below rest on are there (a seed change that lost them fails here)."""
    text = hostile.read_bytes()
    assert b"\xff" in text and b'"traceid"' in text and b'"traceId" : "' in text and b"\\ud800" in text
    tally = Tally()
    spans = list(raw_spans([hostile], tally, mapping_digest(), 1_000_000))
    assert len(spans) > 100
    assert {"malformed JSON", "not an OTLP trace request"} <= set(tally.lines_skipped)
    assert {"invalid ids", "wrong attribute type"} <= set(tally.spans_skipped)


def mapping_digest():
    import hashlib

    return hashlib.sha256()


def test_the_trace_id_search_finds_what_the_regular_expression_finds(hostile):
    lines = DEMO.read_bytes().splitlines(keepends=True) + hostile.read_bytes().splitlines(keepends=True)
    lines += [b'{"traceId":"ab","x":{"traceId":"cd"}}', b'{"traceId":"","traceId":"a\\"b","traceId":"ok"}',
              b'{"traceId":"' + b"a" * 65 + b'"}', b'{"traceId":"' + b"a" * 64 + b'"}',
              b'{"traceid":"ab","traceId":"cd"}', b'{"trace_id":"ab","traceId":"cd"}', b'{"traceId" :"ab"}',
              b'{"traceId":"ab"', b'"traceId":"', b'{"traceID":"ab","traceId":"cd"}', b"no ids at all"]
    checked = 0
    for line in lines:
        assert _line_ids(line) == _TRACE_ID.findall(line), line[:200]
        checked += bool(_TRACE_ID.findall(line))
    assert checked > 80


def _span_json(**changes) -> dict:
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "parentSpanId": "", "name": "chat", "kind": 3,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                           {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}},
                           {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "Hi?"}}],
            "status": {"code": 1}}
    span.update(changes)
    return span


def _line(*spans, resource=None, **group) -> bytes:
    request = {"resourceSpans": [{"resource": resource or {"attributes": [
        {"key": "service.name", "value": {"stringValue": "claims"}}]}, "scopeSpans": [{"scope": {"name": "t"},
                                                                                      "spans": list(spans)}], **group}]}
    return json.dumps(request).encode() + b"\n"


def _attr(key: str, value) -> dict:
    return {"key": key, "value": value}


#: Lines the typed reading must read as the general one does, or hand to it: every AnyValue field, numbers past
#: 64 bits, nulls, snake_case, unknown fields, events and resources, texts over the limit, text that is not UTF-8.
ODD_LINES = [
    _line(_span_json(), _span_json(spanId="ef" * 8, parentSpanId="cd" * 8)),
    _line(_span_json(attributes=[_attr("llm.token_count.prompt", {"intValue": "12"}),
                                 _attr("llm.token_count.completion", {"intValue": 7}),
                                 _attr("llm.cost.total", {"doubleValue": 3}),
                                 _attr("llm.cost.prompt", {"doubleValue": "NaN"}),
                                 _attr("flag", {"boolValue": True}), _attr("blob", {"bytesValue": "AAE="}),
                                 _attr("list", {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}),
                                 _attr("map", {"kvlistValue": {"values": [_attr("k", {"stringValue": "v"})]}}),
                                 _attr("empty", {}), _attr("both", {"stringValue": "s", "intValue": "1"}),
                                 _attr(KIND_KEY, {"stringValue": "LLM"})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}),
                                 _attr("llm.token_count.prompt", {"intValue": 2**70})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}),
                                 _attr("llm.token_count.prompt", {"intValue": -(2**63) - 1})])),
    _line(_span_json(startTimeUnixNano=2**65, endTimeUnixNano=2**66)),
    _line(_span_json(startTimeUnixNano=1700000000000000000, endTimeUnixNano=1600000000000000000)),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"intValue": "x1"})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"doubleValue": "inf"})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"intValue": 5})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"intValue": "1"}),
                                 _attr("x", {"stringValue": "later"})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"stringValue": None})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"arrayValue": None})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"arrayValue": {"values": 3}})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"weird": 1})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), {"key": 5, "value": {}}])),
    _line(_span_json(attributes=None)), _line(_span_json(attributes="none")), _line(_span_json(name=None)),
    _line(_span_json(name=5)), _line(_span_json(traceId=None)), _line(_span_json(traceId="0" * 32)),
    _line(_span_json(traceId="q83vQ83vq83vq83vq83vqw==")), _line(_span_json(spanId=7)),
    _line(_span_json(parentSpanId=None)), _line(_span_json(startTimeUnixNano=None)),
    _line(_span_json(startTimeUnixNano=1.5)), _line(_span_json(trace_id="ab" * 16)), _line(_span_json(extra=1)),
    _line(_span_json(events=[{"name": "gen_ai.client.inference.operation.details",
                              "attributes": [_attr("gen_ai.input.messages", {"stringValue": "[]"})]},
                             {"name": "exception", "attributes": []}])),
    _line(_span_json(events=None)), _line(_span_json(events=[])), _line(_span_json(events=[{"attributes": 5}])),
    _line(_span_json(events=[{"name": "gen_ai.x", "attributes": [_attr("n", {"intValue": 2**70})]}])),
    _line(_span_json(), resource={"attributes": [_attr("service.name", {"intValue": "5"})]}),
    _line(_span_json(), resource={"attributes": 3}), _line(_span_json(), schemaUrl="https://x"),
    _line(_span_json(), instrumentationLibrarySpans=[]),
    json.dumps({"resourceSpans": [{"resource": None, "scopeSpans": [{"spans": [_span_json()]}]}]}).encode(),
    json.dumps({"resourceSpans": [{"scope_spans": [{"spans": [_span_json()]}]}]}).encode(),
    json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": None}]}]}).encode(),
    json.dumps({"resourceSpans": [{"scopeSpans": None}]}).encode(),
    json.dumps({"resourceSpans": [None, 5, {"scopeSpans": [{"spans": [_span_json(), 5]}]}]}).encode(),
    json.dumps({"resourceSpans": "x"}).encode(), json.dumps({"resource_spans": []}).encode(), b"[1, 2]\n",
    _line(_span_json(status={"message": "caf\u00e9"})),
    _line(_span_json(status={"message": "x"})).replace(b'"x"', b'"\xff"'),
    _line(_span_json(status={"message": "x"})).replace(b'"x"', b'"\\ud800"'),
    _line(_span_json(status={"message": "x"})).replace(b'"x"', b"1e400"),
    _line(_span_json(status={"message": "x"})).replace(b'"x"', b"NaN"),
    _line(_span_json()).replace(b'"Hi?"', b'"caf\\u00e9 \\ud83d\\ude00"'),
    _line(_span_json()).replace(b'"Hi?"', b'"\\ud800"'), _line(_span_json())[:-40],
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("big", {"stringValue": "b" * 1500})])),
    _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("big", {"stringValue": "b" * 900}),
                                 _attr("big2", {"stringValue": "\u00e9" * 999})])),
]


def _mapped(line: bytes, limit: int, fast: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(otlp_fast, "FAST", fast)
    return mapping.map_units([(1, "f: line 1", "line", line)], limit, ("flag",), False)


@pytest.mark.parametrize("limit", [1_000, 1_000_000])
def test_the_typed_reading_of_a_line_gives_what_the_general_reading_gives(hostile, monkeypatch, limit):
    lines = DEMO.read_bytes().splitlines(keepends=True) + hostile.read_bytes().splitlines(keepends=True)
    typed = 0
    for line in lines + ODD_LINES:
        if not line.strip():
            continue
        general = _mapped(line, limit, False, monkeypatch)
        assert _mapped(line, limit, True, monkeypatch) == general, line[:300]
        typed += otlp_fast.fast_spans(line, "here", limit) is not None
    assert typed > 50  # the typed reading did read most of them (the rest went to the general one)


def test_the_typed_reading_reads_the_usual_line_and_hands_over_the_rest():
    usual = [line for line in DEMO.read_bytes().splitlines() if line.strip()]
    assert all(otlp_fast.fast_spans(line, "here", 1_000_000) is not None for line in usual)
    items, read = otlp_fast.fast_spans(ODD_LINES[1], "f: line 1", 1_000_000)
    attributes = dict(items[0].attributes)
    assert read == 1 and math.isnan(attributes.pop("llm.cost.prompt"))
    assert attributes == {"llm.token_count.prompt": 12, "llm.token_count.completion": 7, "llm.cost.total": 3.0,
                          "flag": True, "blob": "AAE=", "list": ["a", 2], "map": {"k": "v"}, "empty": None,
                          "both": "s", KIND_KEY: "LLM"}
    (where, skip), = otlp_fast.fast_spans(ODD_LINES[2], "f: line 3", 1_000_000)[0]  # 2**70: orjson reads a float
    assert (where, skip.reason, skip.detail) == ("f: line 3, span cdcdcdcdcdcdcdcd", "wrong attribute type",
                                                 "attribute 'llm.token_count.prompt': intValue '1.1805916207174113e+21' "
                                                 "is not an integer")
    for odd in (_line(_span_json(trace_id="ab" * 16)), _line(_span_json(name=None)),
                _line(_span_json(), instrumentationLibrarySpans=[]), b"[1, 2]\n",
                _line(_span_json(status={"message": "x"})).replace(b'"x"', b'"\xff"'),
                _line(_span_json(attributes=[_attr(KIND_KEY, {"stringValue": "LLM"}), _attr("x", {"arrayValue": None})]))):
        assert otlp_fast.fast_spans(odd, "here", 1_000_000) is None, odd


def plain_lists(attrs: dict) -> dict:
    found: dict = {}
    for key, value in attrs.items():
        for prefix in openinference._LISTS:
            if key.startswith(prefix):
                index, dot, suffix = key[len(prefix):].partition(".")
                if dot and index.isdecimal():  # a digit such as "²" is not an index
                    found.setdefault(prefix, {}).setdefault(int(index), {})[suffix] = value
    return {prefix: [items[i] for i in sorted(items)] for prefix, items in found.items()}


def plain_turn(message: dict, key: str) -> dict:
    role = role_of(message.get("message.role"), f"{key}.message.role")
    content = _str(message, "message.content", key)
    if not content and len(message) > 1:
        parts = _indexed(message.items(), "message.contents.")
        content = "\n".join(_str(part, "message_content.text", f"{key}.message.contents") for part in parts
                            if part.get("message_content.type", "text") == "text" and part.get("message_content.text"))
    turn = {"role": role, "content": content}
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


def plain_extract(span) -> tuple:
    """OpenInference's reading with every attribute through the general, type-checking helpers."""
    attrs = span.attributes
    kind = attrs.get(KIND_KEY)
    if kind is None:
        raise SpanSkip("no span kind", f"OpenInference attributes but no '{KIND_KEY}'")
    if type(kind) is not str:
        raise SpanSkip("wrong attribute type", f"attribute '{KIND_KEY}' must be a string")
    kind = kind.strip().upper()
    if kind not in openinference._KINDS:
        raise SpanSkip("unknown span kind", f"'{KIND_KEY}' is {kind[:40]!r}")
    lists = plain_lists(attrs) if kind in ("LLM", "RETRIEVER") else {}
    messages = reply = ()
    if kind == "LLM":
        messages = tuple(plain_turn(m, f"llm.input_messages.{n}") for n, m in enumerate(lists.get("llm.input_messages.", ())))
        reply = tuple(plain_turn(m, f"llm.output_messages.{n}") for n, m in enumerate(lists.get("llm.output_messages.", ())))
        if not messages:
            messages = tuple({"role": "user", "content": _str(p, "prompt.text", "llm.prompts")}
                             for p in lists.get("llm.prompts.", ()))
        if not reply:
            reply = tuple({"role": "assistant", "content": _str(c, "completion.text", "llm.choices")}
                          for c in lists.get("llm.choices.", ())[:1])
    raw_input, raw_output = text_attr(attrs, "input.value"), text_attr(attrs, "output.value")
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
    model = (text_attr(attrs, "llm.request.model_name") or text_attr(attrs, "llm.model_name")
             or text_attr(attrs, "embedding.model_name"))
    session = text_attr(attrs, "session.id")
    documents = _documents(lists) if kind == "RETRIEVER" else ()
    return (kind, model, session, question, answer, messages, reply, documents, tool,
            int_attr(attrs, "llm.token_count.prompt"), int_attr(attrs, "llm.token_count.completion"), cost)


def _outcome(read, span):
    try:
        return read(span)
    except SpanSkip as skip:
        return ("skipped", skip.reason, skip.detail)


def test_openinference_reads_every_span_as_the_plain_reading_does(hostile):
    spans = [s for s in raw_spans([DEMO, hostile], Tally(), mapping_digest(), 1_000_000)
             if is_openinference(s.attributes)]
    outcomes = {"read": 0, "skipped": 0}
    for span in spans:
        expected = _outcome(plain_extract, span)
        assert _outcome(openinference.extract, span) == expected, (span.where, span.span_id)
        outcomes["skipped" if expected[0] == "skipped" else "read"] += 1
    assert outcomes["read"] > 50 and outcomes["skipped"] > 20, outcomes


def test_a_digit_that_is_no_index_is_no_list_item():
    """"²" passes str.isdigit but is no number: the key is not read as a list item (it once raised)."""
    from sonar_core.traces.spans import RawSpan

    span = RawSpan("a" * 32, "b" * 16, "", "llm", 1, 2, {
        KIND_KEY: "LLM", "llm.input_messages.\u00b2.message.role": "user",
        "llm.input_messages.\u0663.message.role": "user", "llm.input_messages.\u0663.message.content": "Arabic-Indic 3",
    }, [], "", "here")
    found = openinference.extract(span)
    assert found[5] == ({"role": "user", "content": "Arabic-Indic 3"},)
    assert found[3] == "Arabic-Indic 3"


def _everything(dataset) -> tuple:
    return [dataclasses.asdict(row) for row in dataset.rows], dataset.summary()


@pytest.mark.parametrize("scope", ["span", "trace", "session"])
def test_rows_are_the_same_in_workers_and_through_the_standard_parser(hostile, tmp_path, monkeypatch, scope):
    files = [str(DEMO), str(hostile)]
    here = _everything(load_traces(TraceInput(files=files, scope=scope), spill_parent=tmp_path, limit=40, workers=1))
    assert here[0] and here[1]["traces"]["spans_skipped"]
    workers = _everything(load_traces(TraceInput(files=files, scope=scope), spill_parent=tmp_path, limit=40,
                                      workers=2))
    assert workers == here
    monkeypatch.setattr(mapping, "_fast_loads", None)
    standard = _everything(load_traces(TraceInput(files=files, scope=scope), spill_parent=tmp_path, limit=40,
                                       workers=1))
    assert standard[0] == here[0]
    assert {k: v for k, v in standard[1].items() if k != "cleaned"} == {k: v for k, v in here[1].items()
                                                                          if k != "cleaned"}


SCRIPT = """
import multiprocessing, os, sys, time
from sonar_core.traces.load import TraceRows
from sonar_core.traces.spec import TraceInput

reader = TraceRows(TraceInput(files=[sys.argv[1]], scope="span", workers=2))
for n, row in enumerate(reader):
    if n == 0:
        print("pids", *[p.pid for p in multiprocessing.active_children()], flush=True)
        if sys.argv[2] == "wait":
            time.sleep(60)
        if sys.argv[2] == "fail":
            raise RuntimeError("the rows' consumer failed")
print("rows", n + 1, flush=True)
"""


def _big_file(tmp_path: Path) -> Path:
    path = tmp_path / "spans.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "bench_traces.py"), "make", str(path), "--spans", "20000"],
                   check=True, capture_output=True)
    return path


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def _ended(pids: list[int]) -> bool:
    """Whether every process of ``pids`` has ended, waiting up to 30 s (generous: they are ended at once)."""
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not any(_alive(pid) for pid in pids)


def test_workers_start_from_a_script_with_no_main_guard_and_end_with_it(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(_big_file(tmp_path)), "go"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == "rows 8000" and lines.count("rows 8000") == 1
    pids = [int(p) for p in lines[0].split()[1:]]
    assert len(pids) == 2 and _ended(pids)


def test_ctrl_c_ends_the_load_and_its_workers(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(_big_file(tmp_path)), "wait"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        pids = [int(p) for p in first.split()[1:]]
        assert first.startswith("pids") and len(pids) == 2
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)  # generous: the interrupted load ends at once
    finally:
        process.kill()
    assert process.returncode != 0 and "KeyboardInterrupt" in err
    assert _ended(pids)


def test_an_error_while_rows_are_read_ends_the_workers(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(_big_file(tmp_path)), "fail"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1 and "RuntimeError: the rows' consumer failed" in done.stderr
    pids = [int(p) for p in done.stdout.splitlines()[0].split()[1:]]
    assert len(pids) == 2 and _ended(pids)


def _units_of_ranges(ranges) -> list:
    from sonar_core.traces.ranges import range_units

    return [unit for span in ranges for unit in range_units(span)]


def test_the_first_pass_shared_among_workers_finds_what_one_process_finds(hostile, monkeypatch):
    """Every file cut into parts (one per worker): the same trace ends, unit count and fingerprint as the serial
    pass, and ranges that cover each file end to end and hand over the units read_units hands over."""
    from sonar_core.traces import first_pass
    from sonar_core.traces.files import read_units, trace_ends
    from sonar_core.traces.parallel import Workers
    from sonar_core.traces.ranges import RangeSink

    monkeypatch.setattr(first_pass, "_PART_BYTES", 1)
    files = [hostile, DEMO]
    serial = RangeSink()
    ends = trace_ends(files, serial)
    with Workers(3, TraceInput(files=[str(f) for f in files]), ()) as workers:
        shared = RangeSink()
        assert first_pass.shared_first_pass(files, workers, shared) == ends
    assert len(shared.ranges) > len(serial.ranges) >= 2  # cut at the parts' ends too
    requests = len(DEMO.read_text().splitlines())  # 6: the hostile file has them 12 times, then "[1, 2]" and a blank
    assert shared.units == serial.units == 12 * requests + 1 + requests
    assert shared.digest.hexdigest() == serial.digest.hexdigest()
    for path in files:
        mine = [(r.start, r.end) for r in shared.ranges if r.path == str(path)]
        assert mine[0][0] == 0 and mine[-1][1] == path.stat().st_size
        assert all(a[1] == b[0] for a, b in zip(mine, mine[1:]))
    expected = [unit for unit in read_units(files, Tally(), hashlib.sha256()) if unit[2] == "line"]
    assert _units_of_ranges(shared.ranges) == _units_of_ranges(serial.ranges) == expected


@pytest.mark.parametrize("scope", ["span", "session"])
def test_files_cut_into_parts_or_compressed_give_the_rows_of_one_process(hostile, tmp_path, monkeypatch, scope):
    from sonar_core.traces import first_pass

    monkeypatch.setattr(first_pass, "_PART_BYTES", 1)
    packed = tmp_path / "demo.jsonl.gz"
    packed.write_bytes(gzip.compress(DEMO.read_bytes()))
    for files in ([str(hostile), str(DEMO)], [str(hostile), str(packed)]):  # ranges; then the units sent as before
        loads = [load_traces(TraceInput(files=files, scope=scope), spill_parent=tmp_path, limit=40, workers=n)
                 for n in (1, 2)]
        here, there = [(_everything(d), d.fingerprint) for d in loads]
        assert there == here and here[0][0]
