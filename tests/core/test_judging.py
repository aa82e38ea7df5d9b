"""The judge evaluator base: prompts, reading answers, majority verdicts and agreement."""

from __future__ import annotations

import pytest

from sonar_core import Input, Param, Row
from sonar_core.testing import make_context
from sonar_core.judge_evaluator import JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote, placeholders_in, render_prompt
from sonar_core.llm import Completion

ROW = Row(key="k", input="Where is {actual_answer}?", expected_output="Paris", context=["chunk one", "chunk two"],
          actual_output="In {{QUESTION}} land", model_key="m", test_case_key="t")


def test_render_fills_every_placeholder_spelling_once():
    template = ("Q={{QUESTION}} q={input} EA={{ expected_answer }} {EXPECTED_OUTPUT} RC={{RETRIEVED_CONTEXT}} "
                "C={context} AA={{ACTUAL_ANSWER}} {ACTUAL_OUTPUT} keep={\"answer\": string}")
    assert render_prompt(template, ROW) == (
        "Q=Where is {actual_answer}? q=Where is {actual_answer}? EA=Paris Paris RC=chunk one\n\nchunk two "
        "C=chunk one\n\nchunk two AA=In {{QUESTION}} land In {{QUESTION}} land keep={\"answer\": string}")


def test_placeholders_name_the_inputs_in_catalogue_order():
    assert placeholders_in("{ACTUAL_OUTPUT} {INPUT}") == (Input.QUESTION, Input.ACTUAL_ANSWER)
    assert placeholders_in("{{context}} and {{EXPECTED_ANSWER}}") == (Input.EXPECTED_ANSWER, Input.RETRIEVED_CONTEXT)
    assert placeholders_in("no placeholder {here}") == ()


@pytest.mark.parametrize("answer, passed, reason", [
    ("absent", True, "answered 'absent'"),
    ("  Present.", False, "answered 'present'"),
    ('"ABSENT"', True, "answered 'absent'"),
    ("The text is absent of contact details, so absent.", True, "answered 'absent'"),
    ("present - but it could be absent", False, "answered 'present'"),
    ("I think it might be absent or present", None, "expected 'absent' or 'present', the answer holds several of them"),
    ("maybe", None, "expected 'absent' or 'present', the answer holds none of them"),
    ("", None, "expected 'absent' or 'present', the answer holds none of them"),
    ("presently absent", True, "answered 'absent'"),
])
def test_keyword_vote(answer, passed, reason):
    vote = keyword_vote(answer, {"absent": True, "present": False})
    assert (vote.passed, vote.reason) == (passed, reason)


class _Scripted(JudgeEvaluator):
    id = "scripted_judge"
    display_name = "Scripted judge"
    required_inputs = (Input.ACTUAL_ANSWER,)
    prompt_template = "Judge {{ACTUAL_ANSWER}}"
    metrics = judge_metrics(passes=("ok", "OK"), fails=("bad", "Bad"), retrieval=("rf", "RF"),
                            generation=("gf", "GF"), parse=("pf", "PF"), what="")

    def parse_answer(self, answer: str) -> JudgeVote:
        if answer == "crash":
            raise ValueError("boom")
        return keyword_vote(answer, {"yes": True, "no": False}, {"no": "said no"})


def _result(*answers: str | None):
    evaluator = _Scripted(_Scripted.validate_params({"judge_repeats": len(answers)}), make_context())
    completions = [Completion(text=a) if a is not None else Completion(text=None, error="timeout (after 6 attempts)")
                   for a in answers]
    return evaluator._row_result("j", completions)


def test_majority_verdict_and_agreement():
    result = _result("yes", "no", "yes")
    assert result.values == {"ok": 1.0, "bad": 0.0, "rf": 0.0, "gf": 0.0, "pf": 0.0, "judge_agreement": 2 / 3,
                             "judge_confidence": None}
    assert result.error_message is None
    assert result.details == {"judge": "j", "judge_answers": ["yes", "no", "yes"],
                              "judge_votes": ["pass", "fail", "pass"]}


def test_a_tie_fails_the_row_with_the_judges_reason():
    result = _result("no", "yes")
    assert result.values["ok"] == 0.0 and result.values["bad"] == 1.0 and result.values["judge_agreement"] == 0.5
    assert result.error_message == "judge j: said no"


def test_unreadable_answers_and_failed_calls_vote_for_nothing():
    result = _result("no", "what?", None, "crash")
    assert result.values["bad"] == 1.0 and result.values["pf"] == 0.0
    assert result.values["judge_agreement"] == 0.25
    assert result.details["judge_votes"] == ["fail", "none", "none", "none"]
    assert result.details["judge_answers"] == ["no", "what?", None, "crash"]


def test_no_readable_answer_is_a_parse_failure_with_the_raw_answer_kept():
    result = _result("what?")
    assert result.values == {"ok": 0.0, "bad": 0.0, "rf": 0.0, "gf": 0.0, "pf": 1.0, "judge_agreement": None,
                             "judge_confidence": None}
    assert result.error_message == "judge j: expected 'yes' or 'no', the answer holds none of them"
    assert result.details["judge_answers"] == ["what?"]
    assert result.details["parse_error"] == result.error_message
    failed = _result(None)
    assert failed.values["pf"] == 1.0
    assert failed.error_message == "judge j: judge call failed: timeout (after 6 attempts)"
    crashed = _result("crash")
    assert crashed.error_message == "judge j: the answer could not be read (ValueError: boom)"


def test_a_single_judgement_has_no_agreement_figure():
    assert _result("yes").values["judge_agreement"] is None


def test_a_judge_evaluator_must_read_answers_and_have_a_prompt():
    from sonar_core.plugins import _check_declaration

    class NoParser(JudgeEvaluator):
        id = "no_parser"
        display_name = "No parser"
        prompt_template = "{{ACTUAL_ANSWER}}"
        metrics = _Scripted.metrics

    class NoPrompt(_Scripted):
        id = "no_prompt"
        prompt_template = "  "

    assert _check_declaration(NoParser) == "NoParser does not implement parse_answer()"
    assert _check_declaration(NoPrompt) == "NoPrompt declares no prompt_template"
    assert _check_declaration(_Scripted) is None


def test_a_judge_evaluator_declares_its_judge_and_prompt():
    assert _Scripted.requires_judge is True
    assert _Scripted.judge_key({"custom_eval_judge_config_key": "gpt", "judge_repeats": 1}) == "gpt"
    assert _Scripted.judge_key(_Scripted.validate_params({})) is None  # the run's default judge
    assert _Scripted.judge_prompt() == "Judge {{ACTUAL_ANSWER}}"

    class OwnKey(_Scripted):
        judge_param = "grader"
        parameters = (Param("grader", str, None, "Judge configuration."),)

    assert OwnKey.judge_key({"grader": "local", "custom_eval_judge_config_key": "gpt"}) == "local"
