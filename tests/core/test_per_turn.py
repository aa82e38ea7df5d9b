"""Per-turn scoring (#24 item 4): each assistant turn scored with the user turn before it; the row's
value is the mean over turns, the minimum and the turns kept and shown in the drill-down."""

from __future__ import annotations

import json

import pytest

from sonar_core import Evaluator, Input, Metric, RowResult
from sonar_core.errors import ConfigError
from sonar_core.execution.per_turn import PerTurn
from sonar_core.testing import make_context, make_row

CONVERSATION = [
    {"role": "system", "content": "Answer with a number."},
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "0.8"},
    {"role": "user", "content": "second question"},
    {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]},
    {"role": "tool", "content": "looked up"},
    {"role": "assistant", "content": "0.2"},
    {"role": "user", "content": "third <question>"},
    {"role": "assistant", "content": "0.5"},
]


class _Recorder(Evaluator):
    id = "recorder"
    display_name = "Recorder"
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER)
    metrics = (Metric("score", "Score", "The answer's number.", is_primary=True),)
    seen: list = []

    def evaluate(self, rows):
        self.seen.extend((r.input, r.actual_output) for r in rows)
        return [RowResult(values={"score": float(r.actual_output)}) for r in rows]


def test_turns_are_scored_with_the_user_turn_before_them():
    _Recorder.seen = []
    plain = make_row(key="plain", input="q", actual_output="0.9")
    conv = make_row(key="conv", conversation=CONVERSATION)
    results = PerTurn(_Recorder({}, make_context())).evaluate([plain, conv])
    # The tool-calling turn says nothing and is not scored; the system turn is no question.
    assert _Recorder.seen == [("q", "0.9"), ("first question", "0.8"), ("second question", "0.2"),
                              ("third <question>", "0.5")]
    assert results[0].values == {"score": 0.9} and results[0].details == {}
    # Mean (0.8 + 0.2 + 0.5) / 3 = 0.5, min 0.2, by hand.
    assert results[1].values == {"score": pytest.approx(0.5, abs=1e-15)}
    assert results[1].details == {"per_turn": [{"turn": 2, "values": {"score": 0.8}},
                                               {"turn": 6, "values": {"score": 0.2}},
                                               {"turn": 8, "values": {"score": 0.5}}],
                                  "per_turn_min": {"score": 0.2}}


def _dataset(tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [{"key": "conv", "test_case_key": "conv", "model_key": "m", "conversation": CONVERSATION},
            {"key": "plain", "test_case_key": "plain", "model_key": "m", "input": "q", "actual_output": "0.9"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_run_keeps_the_turns_and_the_drilldown_shows_them(tmp_path, monkeypatch):
    from conftest import CORE_TESTS
    from sonar_core import run

    monkeypatch.syspath_prepend(str(CORE_TESTS))
    result = run(dataset=_dataset(tmp_path), output_dir=tmp_path / "out", run_id="r", plugins=["toy_plugin"],
                 evaluators=[{"id": "toy_score", "per_turn": True}], progress=False)
    folder = next((tmp_path / "out" / "r").glob("explainer_*ToyScore*"))
    records = {r["key"]: r for r in json.loads((folder / "global_llm_eval_results" / "application_json" /
                                                "explanation.json").read_text())["results"]}
    # Without per_turn the conversation row would score its last assistant turn, 0.5; per turn the mean
    # of 0.8, 0.2 and 0.5 is 0.5 too, so the minimum and the turns tell them apart.
    assert records["conv"]["score"] == pytest.approx(0.5)
    assert records["conv"]["details"]["per_turn_min"] == {"score": 0.2, "error_rate": None}
    assert [t["turn"] for t in records["conv"]["details"]["per_turn"]] == [2, 6, 8]
    assert records["plain"]["score"] == 0.9 and records["plain"]["details"] == {}
    run_json = json.loads((tmp_path / "out" / "r" / "run.json").read_text())
    assert "per_turn" in json.dumps(run_json)
    from sonar_core.names import case_page_name

    page = (tmp_path / "out" / "r" / "cases" / case_page_name("conv")).read_text()
    assert "mean of 3 turns, min 0.20 (turn 2: 0.80, turn 6: 0.20, turn 8: 0.50)" in page
    assert 'data-turn="6"' in page and "third &lt;question&gt;" in page
    assert result.executed


def test_per_turn_refuses_an_evaluator_that_needs_what_a_turn_lacks(tmp_path):
    from sonar_core import run

    with pytest.raises(ConfigError, match="per_turn scores each assistant turn with the user turn before it, but "
                                          "this evaluator needs the expected answer, which a turn does not have"):
        run(dataset=_dataset(tmp_path), output_dir=tmp_path / "out", evaluators=[{"id": "bleu", "per_turn": True}],
            progress=False)
