"""A conversation's case page as a browser shows it (headless Chromium, #24 item 6): the transcript
with roles, a tool call with its arguments, the tool's result and the verdicts beside the judged turn;
the script payloads in the conversation are text, never run."""

from __future__ import annotations

import json

import pytest

from sonar_core import names, run

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
CONVERSATION = [
    {"role": "system", "content": "You are a claims assistant."},
    {"role": "user", "content": "My bike was stolen " + PAYLOAD},
    {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup_policy",
                                                         "arguments": {"policy_id": "P-100", "note": PAYLOAD}}]},
    {"role": "tool", "content": "theft covered " + PAYLOAD, "tool_call_id": "call_1", "name": "lookup_policy"},
    {"role": "assistant", "content": "Your policy covers theft. " + PAYLOAD},
]


def test_case_page_shows_the_transcript_with_a_tool_call(tmp_path, browser):
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps({"test_case_key": "claim-1", "model_key": "agent", "conversation": CONVERSATION,
                                "expected_tool_calls": [{"name": "lookup_policy",
                                                         "arguments": {"policy_id": "P-100", "note": PAYLOAD}}]})
                    + "\n", encoding="utf-8")
    run(dataset=data, output_dir=tmp_path / "out", run_id="r", evaluators=["tool_call_accuracy", "trajectory_match"],
        progress=False)
    page = tmp_path / "out" / "r" / names.CASES_DIR / names.case_page_name("claim-1")
    assert browser.load(page.as_uri()) == []
    turns = json.loads(browser.evaluate("""JSON.stringify(Array.from(document.querySelectorAll('ol.transcript > li'))
      .map(li => ({role: li.dataset.role, turn: li.dataset.turn,
                   text: (li.querySelector(':scope > pre') || {}).textContent || '',
                   calls: Array.from(li.querySelectorAll('li.tool-call')).map(c => [c.querySelector('code').textContent,
                                                                                     c.querySelector('pre').textContent]),
                   verdicts: Array.from(li.querySelectorAll('ul.turn-verdicts li')).map(v => v.textContent)})))"""))
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "tool", "assistant"]
    assert turns[1]["text"] == "My bike was stolen " + PAYLOAD  # the payload is text
    (name, arguments), = turns[2]["calls"]
    assert name == "lookup_policy"
    assert json.loads(arguments) == {"policy_id": "P-100", "note": PAYLOAD}
    assert turns[3]["text"] == "theft covered " + PAYLOAD
    # Both evaluators judged the whole conversation: their verdicts stand beside the last assistant turn.
    assert turns[4]["verdicts"] == ["Tool call accuracy1.00", "Trajectory match1.00"]
    assert all(not t["verdicts"] for t in turns[:4])
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('ol.transcript script, ol.transcript img').length") == 0
