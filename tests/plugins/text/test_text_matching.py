"""Text Matching evaluator: per-row 0/1 values of all five metrics, messages and details."""

from __future__ import annotations

import time

from sonar_core.contract import Input, MetricRole, ResultKind
from sonar_core.testing import make_context, make_row, model_means, score_rows

from sonar_plugins.text import register_evaluators
from sonar_plugins.text.text_matching import TextMatchingEvaluator
from slow_regex import SLOW, SLOW_TEXT

KEYS = [
    "model_passes",
    "model_failures",
    "model_retrieval_failures",
    "model_generation_failures",
    "model_parse_failures",
]
COND_3 = '"15,969" AND regexp("[Mm]illion")'


def values(result) -> list[float]:
    """The five metric values of a row, in the order of KEYS."""
    return [result.values[k] for k in KEYS]


def evaluator(timeout_s: float = 0.2, **params) -> TextMatchingEvaluator:
    ev = TextMatchingEvaluator(TextMatchingEvaluator.validate_params(params), make_context())
    ev.regex_timeout_s = timeout_s
    return ev


# -- declarations ---------------------------------------------------------------------------


def test_declaration():
    cls = TextMatchingEvaluator
    assert cls.id == "text_matching"
    assert cls.kind is ResultKind.BOOL
    assert cls.required_inputs == (Input.ACTUAL_ANSWER, Input.CONDITIONS)
    assert cls.optional_inputs == (Input.RETRIEVED_CONTEXT,)
    assert [m.key for m in cls.metrics] == KEYS
    assert [m.role for m in cls.metrics] == [
        MetricRole.PASS,
        MetricRole.FAIL,
        MetricRole.RETRIEVAL_FAILURE,
        MetricRole.GENERATION_FAILURE,
        MetricRole.PARSE_FAILURE,
    ]
    assert cls.primary_metric().key == "model_passes"
    assert [m.higher_is_better for m in cls.metrics] == [True, False, False, False, False]
    assert all(m.threshold == 0.5 and m.value_range == (0.0, 1.0) for m in cls.metrics)
    # Mirrors (fail = 1 - pass, generation failure = fail) raise no problems of their own.
    assert [m.raises_problems for m in cls.metrics] == [True, False, True, False, True]
    assert cls.validate_params({})["evaluate_retrieved_context"] is True


def test_registered_by_the_text_family():
    registered = []
    register_evaluators(register=registered.append)
    assert TextMatchingEvaluator in registered


# -- hand-computed values across models -----------------------------------------------------


def test_values_of_all_five_metrics_for_two_models():
    rows = [
        # m1: answer and context pass -> pass.
        make_row(key="1", test_case_key="tc1", model_key="m1", output_condition=COND_3,
                 actual_output="Revenue was 15,969 million.", context=["Brazil: 15,969 Million"]),
        # m1: answer lacks "million"; context lacks "15,969" -> fail + retrieval failure.
        make_row(key="2", test_case_key="tc2", model_key="m1", output_condition=COND_3,
                 actual_output="Revenue was 15,969.", context=["nothing relevant"]),
        # m1: empty answer against constraints -> fail at the first constraint.
        make_row(key="3", test_case_key="tc3", model_key="m1", output_constraints=["Paris", "France"],
                 actual_output=""),
        # m1: unicode, multi-line answer, NOT condition -> pass.
        make_row(key="4", test_case_key="tc4", model_key="m1", output_condition='NOT "sorry" AND "日本語"',
                 actual_output="Das ist schön — 日本語\nzweite Zeile"),
        # m2: answer writes 15969 -> fail at the literal; context passes.
        make_row(key="5", test_case_key="tc1", model_key="m2", output_condition=COND_3,
                 actual_output="15969 Million", context=["15,969 million"]),
        # m2: malformed condition -> parse failure.
        make_row(key="6", test_case_key="tc5", model_key="m2", output_condition='"a" AND (',
                 actual_output="a"),
        # m2: catastrophic regexp -> timeout -> parse failure.
        make_row(key="7", test_case_key="tc6", model_key="m2", output_condition=SLOW,
                 actual_output=SLOW_TEXT),
    ]
    results = list(evaluator().evaluate(rows))
    #                              pass fail retr gen parse
    assert values(results[0]) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(results[1]) == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert values(results[2]) == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert values(results[3]) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(results[4]) == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert values(results[5]) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert values(results[6]) == [0.0, 0.0, 0.0, 0.0, 1.0]

    # Per-model shares (the core's mean of the 0/1 values):
    # m1: passes 2/4 = 0.5, failures 2/4 = 0.5, retrieval 1/4 = 0.25, generation 0.5, parse 0.
    # m2: passes 0/3 = 0, failures 1/3, retrieval 0, generation 1/3, parse 2/3.
    assert model_means(TextMatchingEvaluator, rows, results) == {
        "m1": dict(zip(KEYS, [0.5, 0.5, 0.25, 0.5, 0.0])),
        "m2": dict(zip(KEYS, [0.0, 1 / 3, 0.0, 1 / 3, 2 / 3])),
    }

    assert results[0].error_message is None
    assert results[1].error_message == (
        "condition part 'regexp(\"[Mm]illion\")' did not match the actual answer; "
        "condition part '\"15,969\"' did not match the retrieved context"
    )
    assert results[1].details == {
        "condition": COND_3,
        "failed_part": 'regexp("[Mm]illion")',
        "context_failed_part": '"15,969"',
        "parse_error": None,
    }
    assert results[2].error_message == "condition part '\"Paris\"' did not match the actual answer"
    assert results[2].details["condition"] == '"Paris" AND "France"'
    assert results[4].error_message == "condition part '\"15,969\"' did not match the actual answer"
    parse_message = (
        "malformed condition: expected \"text\", regexp(\"pattern\"), NOT or '(' at position 9, "
        "found end of condition"
    )
    assert results[5].error_message == parse_message
    assert results[5].details["parse_error"] == parse_message
    timeout_message = "regular expression '(a|aa)+$' timed out after 0.2 s on the actual answer"
    assert results[6].error_message == timeout_message
    assert results[6].details["parse_error"] == timeout_message


def test_catalogue_example_4_on_answer_and_context():
    condition = '("Brazil" OR "brazil") AND regexp("15,?969 [Mm]illion") AND NOT "Real"'
    rows = [
        make_row(output_condition=condition, actual_output="Brazil revenue was 15,969 million",
                 context=["brazil revenue was 15969 Million"]),
        make_row(output_condition=condition, actual_output="Brazil revenue was 15,969 million Real",
                 context=["Argentina revenue was 15,969 million"]),
    ]
    first, second = score_rows(TextMatchingEvaluator, rows)
    assert values(first) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(second) == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert second.error_message == (
        "condition part 'NOT \"Real\"' did not match the actual answer; "
        "condition part '(\"Brazil\" OR \"brazil\")' did not match the retrieved context"
    )


def test_condition_and_constraints_must_both_hold():
    common = {"output_condition": '"Brazil"', "output_constraints": ["15,969"]}
    passing, failing = score_rows(
        TextMatchingEvaluator,
        [make_row(actual_output="Brazil 15,969", **common), make_row(actual_output="Brazil 15969", **common)],
    )
    assert values(passing) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(failing) == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert failing.details["condition"] == '("Brazil") AND ("15,969")'
    assert failing.error_message == "condition part '\"15,969\"' did not match the actual answer"


def test_context_failure_alone_is_a_retrieval_failure_not_a_fail():
    row = make_row(output_condition='"Paris"', actual_output="Paris", context=["Lyon", "Nice"])
    (result,) = score_rows(TextMatchingEvaluator, [row])
    assert values(result) == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert result.error_message == "condition part '\"Paris\"' did not match the retrieved context"


def test_context_not_checked_when_switched_off_or_blank():
    failing_context = make_row(output_condition='"Paris"', actual_output="Paris", context=["Lyon"])
    (off,) = score_rows(TextMatchingEvaluator, [failing_context], evaluate_retrieved_context=False)
    assert values(off) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert off.details["context_failed_part"] is None
    blank = make_row(output_condition='"Paris"', actual_output="Paris", context=["  ", ""])
    (result,) = score_rows(TextMatchingEvaluator, [blank])
    assert values(result) == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_context_chunks_are_joined_one_per_line():
    row = make_row(output_condition='regexp("15,969\\nmillion")', actual_output="15,969\nmillion",
                   context=["15,969", "million"])
    (result,) = score_rows(TextMatchingEvaluator, [row])
    assert values(result) == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_multiline_answer_with_anchors():
    text = "Summary:\nBrazil revenue was 15,969 million\nEnd."
    rows = [
        make_row(output_condition='regexp("(?m)^Brazil revenue was 15,969 million$")', actual_output=text),
        make_row(output_condition='regexp("^Brazil revenue was 15,969 million$")', actual_output=text),
    ]
    multiline, whole = score_rows(TextMatchingEvaluator, rows)
    assert values(multiline) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(whole) == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_empty_answer():
    rows = [
        make_row(output_condition='NOT "error"', actual_output=""),
        make_row(output_condition='"x"', actual_output=""),
    ]
    negated, literal = score_rows(TextMatchingEvaluator, rows)
    assert values(negated) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert values(literal) == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_constraint_with_quotes_and_regexp_prefix():
    row = make_row(output_constraints=['say "hi"', "REGEXP:\\d{3}"], actual_output='They say "hi" 12 times')
    (result,) = score_rows(TextMatchingEvaluator, [row])
    assert values(result) == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert result.error_message == "condition part 'regexp(\"\\d{3}\")' did not match the actual answer"


def test_invalid_regexp_is_a_parse_failure():
    row = make_row(output_condition='"ok" OR regexp("[unclosed")', actual_output="ok")
    (result,) = score_rows(TextMatchingEvaluator, [row])
    assert values(result) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert result.error_message == (
        "malformed condition: invalid regular expression '[unclosed' (regexp at position 8): "
        "unterminated character set at position 9"
    )


def test_row_without_condition_is_a_parse_failure():
    row = make_row(actual_output="anything")
    (result,) = score_rows(TextMatchingEvaluator, [row])
    assert values(result) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert result.error_message == (
        "no condition to check: the row has neither output_condition nor output_constraints"
    )


def test_regex_timeout_returns_within_two_seconds_with_default_context():
    row = make_row(output_condition=SLOW, actual_output=SLOW_TEXT)
    # The regex package bounds a search by the process's CPU time, so the bound is checked in
    # CPU seconds (on a loaded machine the wall clock can run longer); the wall-clock check
    # only guards against a hang.
    started, started_cpu = time.monotonic(), time.process_time()
    (result,) = score_rows(TextMatchingEvaluator, [row])  # default context: 1 s per search
    assert time.process_time() - started_cpu < 2.0
    assert time.monotonic() - started < 30.0
    assert values(result) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert result.error_message == "regular expression '(a|aa)+$' timed out after 1 s on the actual answer"


def test_regex_timeout_on_the_context():
    # The answer satisfies the OR's first operand; the context makes the regexp run.
    row = make_row(output_condition=f'"ok" OR {SLOW}', actual_output="ok", context=[SLOW_TEXT])
    (result,) = list(evaluator(timeout_s=0.2).evaluate([row]))
    assert values(result) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert result.error_message == "regular expression '(a|aa)+$' timed out after 0.2 s on the retrieved context"
