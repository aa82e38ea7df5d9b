"""A conversation's case page shows the row's expected tool calls beside the transcript, escaped, each
marked made (a call of that name with equal arguments) or not (issue 34); and the agent demo's planted
weakness shows there and as the problem docs/conversations.md describes, with the docs' numbers."""

from __future__ import annotations

import html as htmllib
import json
import re

import sonar_core
from conftest import REPO
from sonar_core import names
from sonar_core.artifacts.transcript import expected_calls, expected_calls_html

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(2)">'


def test_expected_calls_are_marked_made_or_not_by_hand():
    conversation = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup", "arguments": {"id": "P-1"}},
                                                             {"name": "file", "arguments": {"amount": 1001}}]},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup", "arguments": {"id": "P-1"}}]},
    ]
    expected = [{"name": "lookup", "arguments": {"id": "P-1"}}, {"name": "file", "arguments": {"amount": 850}},
                {"name": "lookup", "arguments": {"id": "P-1"}}, {"name": "lookup", "arguments": {"id": "P-1"}}]
    calls = expected_calls(expected, conversation)["expected_tool_calls"]
    # lookup(P-1) was made twice: it meets two expected calls, not the third; file(850) was made as file(1001).
    assert [(c["name"], c["made"]) for c in calls] == [("lookup", True), ("file", False), ("lookup", True),
                                                       ("lookup", False)]
    assert calls[1]["arguments"] == '{\n "amount": 850\n}'
    assert expected_calls([], conversation) == {}
    assert expected_calls_html(None) == ""


def test_the_case_page_shows_the_expected_calls_escaped(tmp_path):
    conversation = [
        {"role": "user", "content": "My bike was stolen"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": "P-100"}}]},
        {"role": "tool", "content": "theft covered", "tool_call_id": "call_1", "name": "lookup_policy"},
        {"role": "assistant", "content": "Covered."},
    ]
    expected = [{"name": "lookup_policy", "arguments": {"policy_id": "P-100"}},
                {"name": "file_claim", "arguments": {"note": PAYLOAD, "amount": 850}}]
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps({"test_case_key": "claim-1", "model_key": "agent", "conversation": conversation,
                                "expected_tool_calls": expected}) + "\n", encoding="utf-8")
    sonar_core.run(dataset=data, output_dir=tmp_path / "out", run_id="r", evaluators=["tool_call_accuracy"],
                   progress=False)
    page = (tmp_path / "out" / "r" / names.CASES_DIR / names.case_page_name("claim-1")).read_text(encoding="utf-8")
    aside = re.search(r'<aside class="expected-calls">.*?</aside>', page, re.S).group(0)
    assert "<script" not in aside and "<img" not in aside
    items = re.findall(r'<li class="expected-call (\w+)"><code>(.*?)</code> <span class="made-mark">(.*?)</span>'
                       r"<pre>(.*?)</pre></li>", aside, re.S)
    assert [(cls, name, mark) for cls, name, mark, _ in items] == [
        ("made", "lookup_policy", "✓ made"), ("missed", "file_claim", "✗ not made with these arguments")]
    # The payload is text: unescaped once, it is the arguments as the dataset gave them.
    assert json.loads(htmllib.unescape(items[1][3])) == {"note": PAYLOAD, "amount": 850}
    # Beside the transcript: both in one pair, the transcript first.
    pair = re.search(r'<div class="conversation-pair"><ol class="transcript".*?</ol>\s*<aside', page, re.S)
    assert pair is not None


def test_the_agent_demo_shows_its_weakness_as_the_docs_say(tmp_path):
    result = sonar_core.run(REPO / "configs" / "agent_demo.yaml", output_dir=str(tmp_path), run_id="a", progress=False)
    record = json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    (problem,) = record["result"]["problems"]
    assert (problem["severity"], problem["evaluator_id"]) == ("MEDIUM", "tool_call_accuracy")
    assert problem["problem_attrs"]["test_case_keys"] == ["agent-suite-amount-after-policy"]
    assert problem["problem_attrs"]["metric_score"] == (1 + (1 + 2 / 3) / 2 + 1) / 3  # 0.9444
    docs = (REPO / "docs" / "conversations.md").read_text(encoding="utf-8")
    for figure in ("(1 + 2/3) / 2 = 0.8333", "a mean of 0.9444", "default threshold, 0.75",
                   "sets the threshold to 1", "MEDIUM problem"):
        assert figure in docs, figure
    page = (result.run_dir / names.CASES_DIR / names.case_page_name("agent-suite-amount-after-policy")).read_text(
        encoding="utf-8")
    aside = re.search(r'<aside class="expected-calls">.*?</aside>', page, re.S).group(0)
    assert re.findall(r'<li class="expected-call (\w+)"><code>(\w+)</code>', aside) == [
        ("made", "lookup_policy"), ("missed", "file_claim")]
    assert '"amount": 850' in htmllib.unescape(aside)  # what the agent should have filed (it filed 1001)
