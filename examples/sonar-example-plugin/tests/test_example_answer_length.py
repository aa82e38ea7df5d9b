"""Tests of the example evaluator, written the way a plugin author would write them."""

import pytest

from sonar_core import ParameterError
from sonar_core.testing import make_row, score_rows
from sonar_example_plugin.answer_length import AnswerLengthEvaluator


def test_answers_within_and_over_the_budget():
    rows = [
        make_row(actual_output="Paris."),                      # 1 word
        make_row(actual_output="one two three four"),          # 4 words: exactly the budget
        make_row(actual_output=" ".join(["word"] * 10)),       # 10 words
        make_row(actual_output="Ça va très bien\nmerci"),      # 5 words over two lines
    ]
    results = score_rows(AnswerLengthEvaluator, rows, max_words=4)
    # conciseness: 1, 1, 4/10 = 0.4, 4/5 = 0.8; answer_words: 1/4, 4/4, min(10/4, 1), min(5/4, 1)
    assert [r.values["conciseness"] for r in results] == [1.0, 1.0, 0.4, 0.8]
    assert [r.values["answer_words"] for r in results] == [0.25, 1.0, 1.0, 1.0]
    assert [r.details["words"] for r in results] == [1, 4, 10, 5]
    assert results[1].error_message is None
    assert results[2].error_message == "answer has 10 words; the budget is 4"


def test_empty_answer_uses_none_of_the_budget():
    (result,) = score_rows(AnswerLengthEvaluator, [make_row(actual_output="")])
    assert result.values == {"conciseness": 1.0, "answer_words": 0.0}


def test_budget_must_be_positive():
    with pytest.raises(ParameterError, match="parameter 'max_words' of evaluator 'answer_length' must be >= 1, got 0"):
        score_rows(AnswerLengthEvaluator, [make_row(actual_output="x")], max_words=0)
