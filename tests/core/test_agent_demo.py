"""The conversation demo (configs/agent_demo.yaml): its suite asked of the bundled offline agent (a
python host with chat: true), turn by turn with tools, then scored; values worked out by hand."""

from __future__ import annotations

import json

import sonar_core
from conftest import REPO
from sonar_core.demo.claims_agent import respond


def test_the_agent_calls_a_tool_then_answers_from_its_result():
    user = [{"role": "user", "content": "Is my flat covered for a leak? NW-2040"}]
    turn = respond(user, [])
    assert turn == {"answer": "", "tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": "NW-2040"}}]}
    history = user + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "lookup_policy", "arguments": '{"policy_id": "NW-2040"}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": "NW-2040: leaks covered."}]
    assert respond(history, []) == {"answer": "According to policy NW-2040: NW-2040: leaks covered."}


def test_the_agent_demo_runs_and_scores_as_worked_out(tmp_path):
    result = sonar_core.run(REPO / "configs" / "agent_demo.yaml", output_dir=str(tmp_path), run_id="a", progress=False)
    assert result.status == "success", result.message
    rows = {r["test_case_key"]: r for r in json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text())}
    assert rows["agent-suite-theft"]["actual_output"] == "Done: Claim CL-9001 filed."
    assert [t["role"] for t in rows["agent-suite-theft"]["conversation"]] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    unknown = rows["agent-suite-unknown-policy"]["conversation"][3]["content"]
    assert unknown == 'error: no result for lookup_policy({"policy_id": "NW-7777"}): unknown tool or arguments'
    folder = next(result.run_dir.glob("explainer_*ToolCallAccuracy*"))
    values = {r["test_case_key"]: r["tool_call_accuracy"] for r in json.loads(
        (folder / "global_llm_eval_results" / "application_json" / "explanation.json").read_text())["results"]}
    # The policy's digits taken for the amount: file_claim matches 2 of 3 arguments, (1 + 2/3) / 2.
    assert values == {"agent-suite-theft": 1.0, "agent-suite-amount-after-policy": (1 + 2 / 3) / 2,
                      "agent-suite-unknown-policy": 1.0}
