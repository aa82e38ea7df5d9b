"""Conversations in the drill-down: per-turn values of an evaluator, a conversation as an HTML
transcript (roles, tool calls with their arguments, tool results) with verdicts beside the turns, and
the row's expected tool calls beside the transcript, each marked made or not.

Plain string formatting, as the case pages (case_pages.py) are written; every text from a dataset, a
model or a judge goes through ``escape(..., quote=True)``.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ..conversation import called_tools
from ..jsontypes import JsonObject
from .html import TEXT_LIMIT, clip
from .views import ExpectedCallView, TurnView

__all__ = ["turn_verdicts", "clip_conversation", "transcript_html",
           "expected_calls", "expected_calls_html"]


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def turn_verdicts(evaluators: list[Any], row_key: str) -> dict[int, list[tuple[str, str, str]]]:
    """Turn index -> (evaluator, value, pass/fail) of the evaluators that scored the row turn by turn; whether a
    turn's value fails is the findings' (:func:`sonar_core.findings.case_verdicts.case_fails`)."""
    out: dict[int, list[tuple[str, str, str]]] = {}
    for ev in evaluators:
        for (turn, value), fails in zip(ev.turns.get(row_key, ()), ev.turn_fails.get(row_key, ()), strict=True):
            out.setdefault(turn, []).append((ev.view["display_name"], "n/a" if value is None else f"{value:.2f}",
                                             "na" if value is None else "not-counted" if getattr(ev, "untrusted", False)
                                             else "fail" if fails else "pass"))
    return out


def clip_conversation(conversation: list[JsonObject], withheld: str | None = None) -> list[TurnView]:
    """The turns as a page shows them: contents cut at TEXT_LIMIT, arguments as indented JSON; with
    ``withheld`` (a sensitive evaluator flagged the answer), each assistant turn's content is that note."""
    out = []
    for turn in conversation:
        content = withheld if withheld is not None and turn["role"] == "assistant" and turn["content"] else turn["content"]
        shown = {"role": turn["role"], "content": clip(content, TEXT_LIMIT)}
        if turn.get("tool_calls"):
            shown["tool_calls"] = [{"name": c["name"], "arguments": clip(json.dumps(c["arguments"], ensure_ascii=False,
                                                                                   indent=1), TEXT_LIMIT)}
                                   for c in turn["tool_calls"]]
        for key in ("tool_call_id", "name"):
            if turn.get(key):
                shown[key] = turn[key]
        out.append(shown)
    return out


def _verdict_list(items: list[tuple[str, str, str]]) -> str:
    lis = "".join(f'<li class="{_e(status)}"><span class="ev">{_e(name)}</span><b>{_e(text)}</b></li>'
                  for name, text, status in items)
    return f'<ul class="verdicts turn-verdicts">{lis}</ul>' if lis else ""


def transcript_html(conversation: list[TurnView], at_turn: dict[int, list[tuple[str, str, str]]],
                    on_whole: list[tuple[str, str, str]]) -> str:
    """``<ol class="transcript">``: one item per turn (role, content, tool calls and their arguments,
    the tool call a result answers); ``at_turn`` (turn index -> ``(evaluator, verdict, status)``) beside
    the turn each verdict judged, ``on_whole`` beside the last assistant turn (the final answer, and the
    conversation as a whole)."""
    last = max((i for i, t in enumerate(conversation) if t["role"] == "assistant"), default=None)
    items = []
    for index, turn in enumerate(conversation):
        role = turn["role"]
        head = f'<span class="tag role">{_e(role)}</span>'
        if role == "tool" and (turn.get("name") or turn.get("tool_call_id")):
            head += f' <span class="muted">result of {_e(turn.get("name") or "")} {_e(turn.get("tool_call_id") or "")}</span>'
        body = f"<pre>{_e(turn['content'])}</pre>" if turn["content"] else ""
        calls = "".join(f'<li class="tool-call">calls <code>{_e(c["name"])}</code><pre>{_e(c["arguments"])}</pre></li>'
                        for c in turn.get("tool_calls", ()))
        if calls:
            body += f'<ul class="tool-calls">{calls}</ul>'
        verdicts = list(at_turn.get(index, ()))
        if index == last:
            verdicts += on_whole
        items.append(f'<li class="turn" data-role="{_e(role)}" data-turn="{index}">{head}{body}'
                     f"{_verdict_list(verdicts)}</li>")
    return f'<ol class="transcript" start="0">{"".join(items)}</ol>\n'


def _arguments(arguments: Any) -> str:
    return clip(json.dumps(arguments, ensure_ascii=False, indent=1), TEXT_LIMIT)


def expected_calls(expected: list[JsonObject],
                   conversation: list[JsonObject] | None) -> dict[str, list[ExpectedCallView]]:
    """``{"expected_tool_calls": [...]}`` for a row that has expected tool calls, else ``{}``: each
    expected call's name, its arguments as indented JSON (cut at TEXT_LIMIT), and ``made``: whether the
    assistant made it, a call of that name with equal arguments (each call made counts for one expected
    call at most; order is not checked here, the evaluators' verdicts say what it costs)."""
    if not expected:
        return {}
    made = called_tools(conversation or [])
    out = []
    for call in expected:
        match = next((i for i, c in enumerate(made) if c["name"] == call["name"]
                      and c.get("arguments") == call.get("arguments")), None)
        if match is not None:
            made.pop(match)
        out.append({"name": call["name"], "arguments": _arguments(call.get("arguments", {})), "made": match is not None})
    return {"expected_tool_calls": out}


def expected_calls_html(calls: list[ExpectedCallView] | None) -> str:
    """``<aside class="expected-calls">``: the expected tool calls in order (name, arguments), each marked
    ✓ made or ✗ not made with these arguments; empty without expected calls."""
    if not calls:
        return ""
    items = "".join(
        f'<li class="expected-call {"made" if c["made"] else "missed"}"><code>{_e(c["name"])}</code> '
        f'<span class="made-mark">{"✓ made" if c["made"] else "✗ not made with these arguments"}</span>'
        f'<pre>{_e(c["arguments"])}</pre></li>' for c in calls)
    return ('<aside class="expected-calls"><h4>Expected tool calls</h4>'
            f'<ol class="expected-calls">{items}</ol></aside>')
