"""Test cases asked of a host as conversations (#24 item 5), against the scripted chat server: a model
that calls a tool and then answers, tools answered from the test case's table (an unknown call gets an
error result), max_turns, a simulated user played by the judge, and a kill -9 mid-conversation resumed
with no finished turn asked again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time

import yaml

import sonar_core
from judge_server import JudgeServer, write_llm_configs

SYSTEM = {"role": "system", "content": "You are Northwind Mutual's claims assistant."}
TOOLS = [{"type": "function", "function": {"name": "lookup_policy", "description": "Read a policy.",
                                           "parameters": {"type": "object",
                                                          "properties": {"policy_id": {"type": "string"}}}}}]
TABLE = [{"name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}, "result": "NW-1001 covers theft."}]


def _call(name: str, arguments: dict, call_id: str = "call_a") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def agent(body: dict) -> dict | None:
    """A scripted agent: a user turn naming a policy gets a lookup_policy call; a tool result gets an
    answer quoting it; anything else a question back."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"From the policy: {last['content']}"}
    if last["role"] == "user" and "NW-" in last["content"]:
        policy = "NW-" + last["content"].split("NW-")[1].split()[0].strip(".,?")
        return _call("lookup_policy", {"policy_id": policy})
    return {"role": "assistant", "content": "Which policy number?"}


def _suite(tmp_path, rows) -> str:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _host(server, **extra) -> dict:
    return {"key": "agent", "kind": "openai_chat", "base_url": server.base_url, "model": "agent-model",
            "retries": 0, **extra}


def _dataset(result) -> dict[str, dict]:
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    return {r["test_case_key"]: r for r in rows}


def test_a_conversation_with_a_tool_call_then_an_answer(tmp_path):
    rows = [
        {"test_case_key": "known", "conversation": [SYSTEM, {"role": "user", "content": "Is my bike covered? NW-1001"}],
         "tools": TOOLS, "tool_results": TABLE,
         "expected_tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}}]},
        {"test_case_key": "unknown", "conversation": [SYSTEM, {"role": "user", "content": "And NW-9999?"}],
         "tools": TOOLS, "tool_results": TABLE,
         "expected_tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": "NW-9999"}}]},
    ]
    with JudgeServer(message_for=agent) as server:
        result = sonar_core.run(test_suite=_suite(tmp_path, rows), hosts=[_host(server)], output_dir=tmp_path / "out",
                                run_id="r", evaluators=["tool_call_accuracy"], llm_cache=str(tmp_path / "c.sqlite"),
                                progress=False)
        bodies = [call.body for call in server.requests]
    assert result.status == "success", result.message
    data = _dataset(result)
    assert data["known"]["conversation"] == [
        SYSTEM,
        {"role": "user", "content": "Is my bike covered? NW-1001"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "call_a", "name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}}]},
        {"role": "tool", "content": "NW-1001 covers theft.", "tool_call_id": "call_a", "name": "lookup_policy"},
        {"role": "assistant", "content": "From the policy: NW-1001 covers theft."},
    ]
    assert data["known"]["actual_output"] == "From the policy: NW-1001 covers theft."
    # The produced dataset scores again as it is: its question is the first user turn.
    from sonar_core.dataset import load_dataset

    reloaded = {r.test_case_key: r for r in load_dataset(result.run_dir / "dataset" / "llm_dataset.json").rows}
    assert reloaded["known"].input == "Is my bike covered? NW-1001"
    assert reloaded["known"].conversation == data["known"]["conversation"]
    # The table does not know NW-9999: the model reads an error result, and answers from it.
    error = 'error: no result for lookup_policy({"policy_id": "NW-9999"}): unknown tool or arguments'
    assert data["unknown"]["conversation"][3]["content"] == error
    assert data["unknown"]["actual_output"] == f"From the policy: {error}"
    # Two host turns per conversation, each with the whole history and the tools (OpenAI protocol).
    assert len(bodies) == 4
    second = next(b for b in bodies if b["messages"][-1]["role"] == "tool" and "NW-1001" in b["messages"][-1]["content"])
    assert second["tools"] == TOOLS
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["function"] == {"name": "lookup_policy",
                                                                  "arguments": '{"policy_id": "NW-1001"}'}
    assert second["messages"][3]["tool_call_id"] == "call_a"
    values = json.loads(next(result.run_dir.glob("explainer_*ToolCallAccuracy*")).joinpath(
        "global_llm_eval_results", "application_json", "explanation.json").read_text())["results"]
    assert {r["test_case_key"]: r["tool_call_accuracy"] for r in values} == {"known": 1.0, "unknown": 1.0}
    turns = [json.loads(line) for line in (result.run_dir / "journal.jsonl").read_text().splitlines()
             if '"conversation turn"' in line]
    assert [(t["test_case_key"], t["turn"], t["role"]) for t in turns if t["test_case_key"] == "known"] == [
        ("known", 1, "user"), ("known", 2, "assistant"), ("known", 3, "tool"), ("known", 4, "assistant")]


def test_max_turns_bounds_a_model_that_keeps_calling_tools(tmp_path):
    rows = [{"test_case_key": "loop", "conversation": [{"role": "user", "content": "Check NW-1001"}], "tools": TOOLS,
             "tool_results": TABLE, "max_turns": 3}]
    with JudgeServer(message_for=lambda body: _call("lookup_policy", {"policy_id": "NW-1001"})) as server:
        result = sonar_core.run(test_suite=_suite(tmp_path, rows), hosts=[_host(server)], output_dir=tmp_path / "out",
                                run_id="r", evaluators=["looping_detection"], llm_cache=str(tmp_path / "c.sqlite"),
                                progress=False)
        assert server.calls == 3
    roles = [t["role"] for t in _dataset(result)["loop"]["conversation"]]
    assert roles == ["user"] + ["assistant", "tool"] * 3


def test_a_simulated_user_played_by_the_judge(tmp_path):
    def both(body: dict) -> dict | None:
        if body["model"] == "scripted-judge":  # the simulated user
            transcript = body["messages"][-1]["content"]
            said = transcript.count("Assistant:")
            text = ["My bike was stolen, I want to claim.", "It is NW-1001.", "STOP"][min(said, 2)]
            return {"role": "assistant", "content": text}
        return agent(body)

    rows = [{"test_case_key": "sim", "tools": TOOLS, "tool_results": TABLE,
             "simulated_user": {"scenario": "Your bike was stolen; your policy is NW-1001.",
                                "stop_when": "the assistant has said whether theft is covered", "max_user_turns": 4}}]
    with JudgeServer(message_for=both) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = sonar_core.run(test_suite=_suite(tmp_path, rows), hosts=[_host(server)], output_dir=tmp_path / "out",
                                run_id="r", evaluators=["looping_detection"], llm_configs=str(configs),
                                llm_cache=str(tmp_path / "c.sqlite"), progress=False)
        judge_prompts = [c.body["messages"] for c in server.requests if c.model == "scripted-judge"]
    assert result.status == "success", result.message
    conversation = _dataset(result)["sim"]["conversation"]
    assert [(t["role"], t["content"]) for t in conversation] == [
        ("user", "My bike was stolen, I want to claim."), ("assistant", "Which policy number?"),
        ("user", "It is NW-1001."), ("assistant", ""), ("tool", "NW-1001 covers theft."),
        ("assistant", "From the policy: NW-1001 covers theft.")]
    # The judge was asked three times (the third said STOP), each with the scenario and the history.
    assert len(judge_prompts) == 3
    assert "Your bike was stolen; your policy is NW-1001." in judge_prompts[0][0]["content"]
    assert "Assistant: Which policy number?" in judge_prompts[1][1]["content"]


def _cached_entries(path) -> int:
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_kill_9_mid_conversation_then_resume_asks_no_finished_turn_again(tmp_path, sonar_cli):
    users = ["Is my bike covered? NW-1001", "And my car, NW-1001 too?", "Thanks. One more: NW-1001?"]
    rows = [{"test_case_key": f"c{i}", "conversation": [SYSTEM] + [{"role": "user", "content": f"{u} ({i})"}
                                                                   for u in users],
             "tools": TOOLS, "tool_results": [{"name": "lookup_policy", "result": "NW-1001 covers theft."}]}
            for i in range(2)]
    cache = tmp_path / "cache.sqlite"
    with JudgeServer(message_for=agent, latency=0.25) as server:
        config = tmp_path / "run.yaml"
        config.write_text(yaml.safe_dump({
            "name": "killed", "test_suite": _suite(tmp_path, rows), "output_dir": str(tmp_path / "reports"),
            "llm_cache": str(cache), "hosts": [_host(server, max_concurrency=1)],
            "evaluators": ["looping_detection"]}), encoding="utf-8")
        run_dir = tmp_path / "reports" / "r1"
        process = subprocess.Popen([sonar_cli, "run", str(config), "--run-id", "r1", "--no-progress"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _cached_entries(cache) < 3:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)  # mid-conversation: 3 of the 12 host turns are done
        process.wait(timeout=30)
        finished = _cached_entries(cache)
        assert 3 <= finished < 6
        server.reset()
        server.latency = 0.0  # slow answers let the kill land mid-run; the resumed run needs none
        done = subprocess.run([sonar_cli, "run", "--resume", str(run_dir), "--no-progress"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        # 2 conversations x 3 user turns x (a tool call + an answer) = 12 host turns; the finished ones
        # came from the cache.
        assert server.calls == 12 - finished
    data = {r["test_case_key"]: r for r in json.loads((run_dir / "dataset" / "llm_dataset.json").read_text())}
    for i in range(2):
        expected = [SYSTEM]
        for u in users:
            expected += [{"role": "user", "content": f"{u} ({i})"},
                         {"role": "assistant", "content": "",
                          "tool_calls": [{"id": "call_a", "name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}}]},
                         {"role": "tool", "content": "NW-1001 covers theft.", "tool_call_id": "call_a",
                          "name": "lookup_policy"},
                         {"role": "assistant", "content": "From the policy: NW-1001 covers theft."}]
        assert data[f"c{i}"]["conversation"] == expected
