"""Conversation rows (#24 item 1): the row shape, defaults of input and actual answer, JSON cells in
CSV, and each malformed turn's one-line error (exit 3 from the CLI)."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from sonar_core import Input
from sonar_core.cli import cli
from sonar_core.dataset import load_dataset
from sonar_core.errors import DatasetError

CONVERSATION = [
    {"role": "system", "content": "You are a claims assistant."},
    {"role": "user", "content": "My bike was stolen."},
    {"role": "assistant", "content": None, "tool_calls": [{"name": "lookup_policy", "arguments": {"id": "P-1"}}]},
    {"role": "tool", "content": "theft covered", "tool_call_id": "c1", "name": "lookup_policy"},
    {"role": "assistant", "content": "Your policy covers theft."},
    {"role": "user", "content": "File it."},
    {"role": "assistant", "content": "Filed.", "tool_calls": [{"name": "file_claim", "arguments": {"kind": "theft"}}]},
]
EXPECTED = [{"name": "lookup_policy", "arguments": {"id": "P-1"}}, {"name": "file_claim", "arguments": {"kind": "theft"}}]


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_defaults_come_from_the_first_user_and_last_assistant_turn(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [{"key": "c1", "conversation": CONVERSATION,
                                                "expected_tool_calls": EXPECTED, "expected_outcome": "a claim"}])
    dataset = load_dataset(path)
    row = dataset.rows[0]
    assert row.input == "My bike was stolen."
    assert row.actual_output == "Filed."
    # OpenAI's null content of a tool-calling turn becomes the empty string.
    assert row.conversation[2] == {"role": "assistant", "content": "",
                                   "tool_calls": [{"name": "lookup_policy", "arguments": {"id": "P-1"}}]}
    assert row.conversation[3]["tool_call_id"] == "c1"
    assert row.expected_tool_calls == EXPECTED
    assert row.expected_outcome == "a claim"
    for needed in (Input.QUESTION, Input.ACTUAL_ANSWER, Input.CONVERSATION, Input.EXPECTED_TOOL_CALLS):
        assert dataset.has_column_for(needed)
    assert not dataset.has_column_for(Input.EXPECTED_ANSWER)


def test_given_input_and_answer_win_over_the_defaults(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [{"key": "c1", "input": "Q", "actual_output": "A",
                                                "conversation": CONVERSATION}])
    row = load_dataset(path).rows[0]
    assert (row.input, row.actual_output) == ("Q", "A")


def test_csv_cells_hold_json(tmp_path):
    path = tmp_path / "d.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "conversation", "expected_tool_calls", "expected_outcome"])
        writer.writerow(["c1", json.dumps(CONVERSATION), json.dumps(EXPECTED), "a claim"])
    row = load_dataset(path).rows[0]
    assert row.conversation[6]["tool_calls"][0]["arguments"] == {"kind": "theft"}
    assert row.expected_tool_calls == EXPECTED
    assert (row.input, row.actual_output) == ("My bike was stolen.", "Filed.")


def _turns(*changed):
    return [{"role": "user", "content": "hi"}, *changed]


MALFORMED = [
    ("conversation", 5, "field 'conversation': expected a list of turns, got int"),
    ("conversation", ["hi"], "field 'conversation', turn 0: expected an object with 'role' and 'content', got str"),
    ("conversation", _turns({"role": "bot", "content": "x"}),
     "field 'conversation', turn 1: unknown role 'bot' (expected system, user, assistant or tool)"),
    ("conversation", _turns({"content": "x"}),
     "field 'conversation', turn 1: missing 'role' (expected system, user, assistant or tool)"),
    ("conversation", _turns({"role": "assistant", "content": 3}),
     "field 'conversation', turn 1: 'content' must be a string, got int"),
    ("conversation", _turns({"role": "assistant"}), "field 'conversation', turn 1: missing 'content'"),
    ("conversation", _turns({"role": "assistant", "content": "", "tool_calls": {"name": "f"}}),
     "field 'conversation', turn 1: 'tool_calls' must be a list of objects, got dict"),
    ("conversation", _turns({"role": "assistant", "content": "", "tool_calls": ["f"]}),
     "field 'conversation', turn 1, tool call 0: expected an object with 'name' and 'arguments', got str"),
    ("conversation", _turns({"role": "assistant", "content": "", "tool_calls": [{"name": 5, "arguments": {}}]}),
     "field 'conversation', turn 1, tool call 0: 'name' must be a non-empty string, got int"),
    ("conversation", _turns({"role": "assistant", "content": "",
                             "tool_calls": [{"name": "f", "arguments": {}}, {"name": "g", "arguments": "x=1"}]}),
     "field 'conversation', turn 1, tool call 1: 'arguments' must be an object, got str"),
    ("conversation", _turns({"role": "user", "content": "", "tool_calls": []}),
     "field 'conversation', turn 1: a user turn cannot carry 'tool_calls' (only an assistant turn can)"),
    ("conversation", _turns({"role": "tool", "content": "r", "tool_call_id": 7}),
     "field 'conversation', turn 1: 'tool_call_id' must be a string, got int"),
    ("expected_tool_calls", {"name": "f"}, "field 'expected_tool_calls': expected a list of tool calls, got dict"),
    ("expected_tool_calls", [{"name": "f", "arguments": []}],
     "field 'expected_tool_calls', call 0: 'arguments' must be an object, got list"),
]


@pytest.mark.parametrize("field, value, message", MALFORMED)
def test_each_malformed_value_is_one_line_naming_file_row_field_and_turn(tmp_path, field, value, message):
    good = {"key": "ok", "input": "q", "actual_output": "a"}
    path = _write_jsonl(tmp_path / "d.jsonl", [good, {"key": "bad", "input": "q", "actual_output": "a", field: value}])
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value) == f"{path}: line 2, {message}"


def test_csv_cell_that_is_not_json(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('key,input,conversation\nc1,q,"[{""role"": ""user"""\n', encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value).startswith(f"{path}: row 2, field 'conversation': not valid JSON (")


def test_cli_exits_3_with_the_one_line_message(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [{"key": "c1", "conversation": _turns({"role": "robot", "content": "x"})}])
    result = CliRunner().invoke(cli, ["run", "-d", str(path), "-e", "text_matching", "--no-progress",
                                      "-o", str(tmp_path / "out")], catch_exceptions=False)
    assert result.exit_code == 3
    assert result.stderr == (f"error: {path}: line 1, field 'conversation', turn 1: unknown role 'robot' "
                             "(expected system, user, assistant or tool)\n")


def test_evaluators_listing_shows_the_conversation_inputs():
    result = CliRunner().invoke(cli, ["evaluators"], catch_exceptions=False, terminal_width=250)
    assert result.exit_code == 0
    header = next(line for line in result.output.splitlines() if "Id" in line and "GPU" in line)
    assert "CV" in header and "TC" in header
    assert Input.CONVERSATION.label == "conversation"
    assert Input.EXPECTED_TOOL_CALLS.label == "expected tool calls"
