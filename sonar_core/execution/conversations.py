"""Asking a host a conversation: turn by turn, with the whole history each time, tools answered from
the test case's table, user turns from a script or a simulated user.

A test case with a ``conversation`` (its system and user turns) or a ``simulated_user`` is not asked
as one prompt. For each user turn the host is asked with the whole history (hosts/chat_turns.py); an
assistant turn that calls tools gets one tool turn per call, its result looked up in the test case's
``tool_results`` (name and arguments; an entry without ``arguments`` answers every call of its tool),
and the host is asked again. A call the table does not know gets an error result the model can read,
so it may recover. ``max_turns`` (default :data:`DEFAULT_MAX_TURNS`) bounds the host's turns in one
conversation.

A simulated user (``{"judge": KEY, "scenario": ..., "stop_when": ..., "max_user_turns": 3}``) is an
LLM judge that writes each user turn from the scenario and the conversation so far, and answers
``STOP`` when ``stop_when`` holds (or after ``max_user_turns`` user turns).

Every host turn and every simulated user turn is an LLM request keyed by the whole history, so it is
cached; a run killed mid-conversation and resumed replays the finished turns from the cache (no call)
and asks only what is left. Each turn is journaled as ``conversation turn``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..conversation import ToolCall, Turn
from ..dataset import Row
from ..hosts.base import Host, HostAnswer
from ..hosts.chat_turns import ask_turn, can_converse
from ..llm.requests import CallTags, LLMRequest

__all__ = ["DEFAULT_MAX_TURNS", "ConversationAnswer", "is_conversation", "converse", "ask_items", "tool_result",
           "SIMULATED_USER_PROMPT"]

#: Host turns a conversation may take when its test case says nothing.
DEFAULT_MAX_TURNS = 10
SIMULATED_USER_PROMPT = """\
You play the user in a conversation with an assistant. Stay in your role: write only what the user \
says next, in one or two sentences, with no quotes and no explanation.

Scenario: {scenario}

When this holds, answer with the single word STOP instead: {stop_when}"""


@dataclass
class ConversationAnswer(HostAnswer):
    """A host's answer to a conversation: the final text, and every turn of the conversation."""

    conversation: list[Turn] = field(default_factory=list)
    stopped: str = ""


def is_conversation(row: Row) -> bool:
    """Whether a test case is asked as a conversation."""
    return bool(row.conversation or row.simulated_user)


def tool_result(row: Row, call: ToolCall) -> str:
    """The result text of ``call`` from the test case's table, or an error the model can read."""
    for entry in row.tool_results:
        if entry["name"] == call["name"] and ("arguments" not in entry or entry["arguments"] == call["arguments"]):
            return entry["result"]
    arguments = json.dumps(call["arguments"], ensure_ascii=False, sort_keys=True)
    return f"error: no result for {call['name']}({arguments}): unknown tool or arguments"


def _transcript(history: list[Turn]) -> str:
    lines = []
    for turn in history:
        if turn["role"] == "system":
            continue
        who = "User" if turn["role"] == "user" else "Assistant" if turn["role"] == "assistant" else "Tool"
        if turn["content"]:
            lines.append(f"{who}: {turn['content']}")
    return "\n".join(lines) or "(nothing yet)"


def _user_turns(row: Row, llm, tags: CallTags, history: list[Turn],
                repeat: int = 0) -> Iterator[str | None]:
    """The user turns: the script's, else the simulated user's (None when it cannot answer)."""
    scripted = [t["content"] for t in row.conversation if t["role"] == "user"]
    if scripted or not row.simulated_user:
        yield from scripted
        return
    sim = row.simulated_user
    client = llm.client(llm.judge_key(sim.get("judge")))
    for _ in range(sim.get("max_user_turns", 3)):
        messages = [{"role": "system", "content": SIMULATED_USER_PROMPT.format(**{k: sim[k] for k in ("scenario", "stop_when")})},
                    {"role": "user", "content": f"The conversation so far:\n{_transcript(history)}\n\n"
                                                "What does the user say next?"}]
        completion = client.complete_many([LLMRequest(messages, repeat=repeat,
                                                      tags={**tags, "role": "simulated user"})])[0]
        if completion.error is not None:
            yield None
            return
        text = (completion.text or "").strip()
        if not text or text.split()[0].strip(".!").upper() == "STOP":
            return
        yield text


def converse(host: Host, row: Row, *, llm, journal, tags: CallTags, repeat: int = 0) -> ConversationAnswer:
    """Ask ``host`` the conversation of test case ``row`` (see the module docstring); never raises."""
    if not can_converse(host):
        return ConversationAnswer(text=None, error=f"host kind '{host.kind}' cannot be asked a conversation "
                                                   "(use an openai_chat host, or a python host with chat: true)")
    history: list[Turn] = [Turn(t) for t in row.conversation if t["role"] == "system"]
    limit = row.max_turns or DEFAULT_MAX_TURNS
    host_turns, duration, tokens_in, tokens_out, all_cached = 0, 0.0, 0, 0, True
    stopped = ""

    def event(turn: Turn, **extra: Any) -> None:
        if journal is not None:
            journal.event("conversation turn", "HostWorker", "converse", **tags, turn=len(history) - 1,
                          role=turn["role"], **extra)

    for user in _user_turns(row, llm, tags, history, repeat):
        if user is None:
            return ConversationAnswer(text=None, error="the simulated user's judge did not answer",
                                      conversation=history)
        history.append({"role": "user", "content": user})
        event(history[-1])
        while True:
            if host_turns >= limit:
                stopped = "max_turns"
                break
            answer = ask_turn(host, history, row.tools, tags, repeat)
            host_turns += 1
            if answer.error is not None:
                return ConversationAnswer(text=None, error=answer.error, duration=duration + answer.duration,
                                          conversation=history)
            duration += answer.duration
            tokens_in += answer.input_tokens or 0
            tokens_out += answer.output_tokens or 0
            all_cached = all_cached and answer.cached
            turn: Turn = {"role": "assistant", "content": answer.content}
            if answer.tool_calls:
                turn["tool_calls"] = answer.tool_calls
            history.append(turn)
            event(turn, cached=answer.cached, tool_calls=[c["name"] for c in answer.tool_calls])
            if not answer.tool_calls:
                break
            for call in answer.tool_calls:
                history.append({"role": "tool", "content": tool_result(row, call), "tool_call_id": call["id"],
                                "name": call["name"]})
                event(history[-1])
        if stopped:
            break
    final = next((t["content"] for t in reversed(history) if t["role"] == "assistant" and t["content"]), "")
    price = getattr(host, "price", None)
    cost = price.cost(tokens_in, tokens_out) if price is not None else None
    return ConversationAnswer(text=final, duration=duration, input_tokens=tokens_in, output_tokens=tokens_out,
                              cost=cost, cached=all_cached and host_turns > 0, conversation=history,
                              stopped=stopped)


def ask_items(host: Host, rows: list[Row], tags: list[CallTags], *, llm, journal,
              repeat: int = 0) -> list[HostAnswer]:
    """Answers to ``rows`` in order: one prompt each as before, conversations turn by turn; ``repeat``:
    the epoch (every request's repeat index)."""
    plain = [i for i, row in enumerate(rows) if not is_conversation(row)]
    answers: list[HostAnswer | None] = [None] * len(rows)
    if plain:
        for i, answer in zip(plain, host.ask_many([rows[i].input for i in plain], tags=[tags[i] for i in plain],
                                                  **({"repeat": repeat} if repeat else {}))):
            answers[i] = answer
    for i, row in enumerate(rows):
        if answers[i] is None:
            answers[i] = converse(host, row, llm=llm, journal=journal, tags=tags[i], repeat=repeat)
    return answers  # type: ignore[return-value]
