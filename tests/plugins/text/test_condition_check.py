"""The shared condition check: a row's condition and its verdict on an answer and a context."""

from __future__ import annotations

import pytest

from sonar_core.testing import make_row

from sonar_plugins.text.condition_check import (
    CONTEXT_SEPARATOR,
    checked_context,
    condition_verdict,
    row_condition,
    row_condition_verdict,
)
from sonar_plugins.text.conditions import ConditionSyntaxError, parse_condition
from slow_regex import SLOW, SLOW_TEXT



def blank_details() -> dict:
    return {"failed_part": None, "context_failed_part": None}


# -- row_condition -----------------------------------------------------------------------------


def test_row_condition_joins_condition_and_constraints():
    row = make_row(output_condition='"Brazil"', output_constraints=["15,969", "REGEXP:\\d+ million"])
    condition = row_condition(row)
    assert condition.source == '("Brazil") AND ("15,969" AND regexp("\\d+ million"))'
    assert condition.evaluate("Brazil: 15,969 million", 1.0).ok
    # The constraints side fails: its first unmet constraint is the failed part.
    outcome = condition.evaluate("Brazil: 15969 million", 1.0)
    assert (outcome.ok, outcome.failed_part) == (False, '"15,969"')


def test_row_condition_alone_and_none():
    assert row_condition(make_row(output_condition='NOT "x"')).source == 'NOT "x"'
    assert row_condition(make_row(output_constraints=["ok"])).source == '"ok"'
    # A blank condition and no constraints: nothing to check.
    assert row_condition(make_row(output_condition="  ")) is None


def test_row_condition_raises_on_a_malformed_condition():
    with pytest.raises(ConditionSyntaxError, match="unterminated character set"):
        row_condition(make_row(output_condition='regexp("[unclosed")'))


# -- condition_verdict -------------------------------------------------------------------------


def test_pass_on_answer_and_context():
    details = blank_details()
    verdict = condition_verdict(parse_condition('"Paris"'), "Paris, France", ["Lyon", "Paris"], 1.0, details)
    assert (verdict.answer_ok, verdict.context_ok, verdict.parse_error, verdict.error_message) == (
        True, True, None, None,
    )
    assert verdict.details is details
    assert details == blank_details()


def test_context_none_is_not_checked():
    verdict = condition_verdict(parse_condition('"Paris"'), "Paris", None, 1.0, blank_details())
    assert (verdict.answer_ok, verdict.context_ok, verdict.error_message) == (True, None, None)


def test_failing_part_on_the_answer_and_on_the_context():
    details = blank_details()
    condition = parse_condition('"15,969" AND regexp("[Mm]illion")')
    verdict = condition_verdict(condition, "15,969 units", ["15,969", "Million"], 1.0, details)
    # Answer: "15,969" holds, the regexp does not. Context "15,969\nMillion" holds both.
    assert (verdict.answer_ok, verdict.context_ok) == (False, True)
    assert details["failed_part"] == 'regexp("[Mm]illion")'
    assert details["context_failed_part"] is None
    assert verdict.error_message == "condition part 'regexp(\"[Mm]illion\")' did not match the actual answer"

    details = blank_details()
    verdict = condition_verdict(condition, "15,969 million", ["about 16k"], 1.0, details, where="the decoded answer")
    assert (verdict.answer_ok, verdict.context_ok) == (True, False)
    assert (details["failed_part"], details["context_failed_part"]) == (None, '"15,969"')
    assert verdict.error_message == "condition part '\"15,969\"' did not match the retrieved context"


def test_both_fail_messages_joined_and_where_names_the_text():
    details = blank_details()
    condition = parse_condition('NOT "123"')
    verdict = condition_verdict(condition, "id 123", ["x123"], 1.0, details, where="the decoded answer")
    assert (verdict.answer_ok, verdict.context_ok) == (False, False)
    assert verdict.error_message == (
        "condition part 'NOT \"123\"' did not match the decoded answer; "
        "condition part 'NOT \"123\"' did not match the retrieved context"
    )


def test_context_chunks_joined_one_per_line():
    assert CONTEXT_SEPARATOR == "\n"
    condition = parse_condition('regexp("^b$")')
    # Without (?m), ^ and $ anchor the whole joined text "a\nb": no match.
    verdict = condition_verdict(condition, "b", ["a", "b"], 1.0, blank_details())
    assert (verdict.answer_ok, verdict.context_ok) == (True, False)
    verdict = condition_verdict(parse_condition('regexp("a\\nb")'), "a\nb", ["a", "b"], 1.0, blank_details())
    assert (verdict.answer_ok, verdict.context_ok) == (True, True)


def test_regex_timeout_is_a_parse_error():
    details = blank_details()
    verdict = condition_verdict(parse_condition(SLOW), SLOW_TEXT, ["ok"], 0.2, details, where="the decoded answer")
    assert verdict.parse_error == "regular expression '(a|aa)+$' timed out after 0.2 s on the decoded answer"
    assert verdict.error_message is None
    assert details == blank_details()

    # The answer passes through the OR's first operand; the context makes the regexp run.
    verdict = condition_verdict(parse_condition(f'"ok" OR {SLOW}'), "ok", [SLOW_TEXT], 0.2, blank_details())
    assert verdict.parse_error == "regular expression '(a|aa)+$' timed out after 0.2 s on the retrieved context"


# -- checked_context and row_condition_verdict -------------------------------------------------


def test_checked_context():
    row = make_row(context=["Lyon", " ", "Paris"])
    assert checked_context(row, True) == ["Lyon", " ", "Paris"]
    assert checked_context(row, False) is None
    # Only blank chunks: the row has no retrieved context to check.
    assert checked_context(make_row(context=["", "  "]), True) is None
    assert checked_context(make_row(), True) is None


def test_row_condition_verdict_checks_the_row_condition():
    row = make_row(output_condition='"Paris"', output_constraints=["France"])
    details = {"condition": None, **blank_details()}
    verdict = row_condition_verdict(row, "Paris, France", ["Lyon"], 1.0, details, where="the decoded answer")
    # Answer holds both parts; the context "Lyon" fails the first one, the operand "Paris"
    # (the parentheses are only in the joined source).
    assert (verdict.answer_ok, verdict.context_ok, verdict.parse_error) == (True, False, None)
    assert verdict.details is details
    assert details == {"condition": '("Paris") AND ("France")', "failed_part": None, "context_failed_part": '"Paris"'}
    assert verdict.error_message == "condition part '\"Paris\"' did not match the retrieved context"


def test_row_condition_verdict_malformed_and_missing():
    details = {"condition": None, **blank_details()}
    verdict = row_condition_verdict(make_row(output_condition='"a" AND'), "a", None, 1.0, details)
    assert verdict.parse_error == (
        "malformed condition: expected \"text\", regexp(\"pattern\"), NOT or '(' at position 7, "
        "found end of condition"
    )
    assert (verdict.context_ok, verdict.error_message) == (None, None)
    assert details == {"condition": '"a" AND', **blank_details()}

    # No condition: None, and the details are left as they were.
    details = {"condition": "unchanged", **blank_details()}
    assert row_condition_verdict(make_row(output_condition=" "), "a", ["b"], 1.0, details) is None
    assert details == {"condition": "unchanged", **blank_details()}
