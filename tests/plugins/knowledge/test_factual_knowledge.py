"""Factual knowledge evaluator: exact and quasi-exact inclusion, OR/AND targets, parameters."""

from __future__ import annotations

import pytest

from sonar_core import Input, ParameterError
from sonar_core.testing import make_row, score_rows
from sonar_plugins.knowledge import register_evaluators
from sonar_plugins.knowledge.factual_knowledge import FactualKnowledgeEvaluator, normalize_quac

FK = "factual_knowledge"
QE = "factual_knowledge_quasi_exact"


def _row(expected: str, actual: str, model: str = "m1", case: str = "tc") -> object:
    return make_row(
        key=f"{case}::{model}", test_case_key=case, model_key=model,
        expected_output=expected, actual_output=actual,
    )


def _scores(expected: str, actual: str, **params) -> tuple[float | None, float | None]:
    (result,) = score_rows(FactualKnowledgeEvaluator, [_row(expected, actual)], **params)
    return result.values[FK], result.values[QE]


# -- declaration -------------------------------------------------------------------------------


def test_declaration():
    cls = FactualKnowledgeEvaluator
    assert cls.id == "factual_knowledge"
    assert [m.key for m in cls.metrics] == [FK, QE]
    assert cls.primary_metric().key == FK
    assert [m.key for m in cls.metrics if m.is_primary] == [FK]
    assert all(m.value_range == (0.0, 1.0) and m.higher_is_better and m.threshold == 0.5 for m in cls.metrics)
    assert cls.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    assert cls.category == "Generation" and cls.problem_type == "accuracy"
    params = {p.name: p.default for p in cls.parameters}
    assert params == {"target_output_delimiter": "<OR>", "logical_operator": "OR"}


def test_registers_through_hook():
    registered = []
    register_evaluators(registered.append)
    assert registered == [FactualKnowledgeEvaluator]


# -- normalisation (fmeval's normalize_text_quac_protocol) --------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # lower-case, "-" "," "!" deleted (not replaced by a space), "The" dropped, spaces collapsed
        ("The  Eiffel-Tower, in Paris!", "eiffeltower in paris"),
        # articles go only as whole words: "theatre" and "another" stay
        ("A theatre, another one", "theatre another one"),
        ("a An THE", ""),
        # only the space character separates words: "the\nend" is one word and survives
        ("the\nend", "the\nend"),
        # unicode letters are lower-cased; unicode punctuation is not in string.punctuation
        ("«São Paulo»!", "«são paulo»"),
        ("", ""),
    ],
)
def test_normalize_quac(text, expected):
    assert normalize_quac(text) == expected


# -- OR / AND -----------------------------------------------------------------------------------


def test_or_any_target_counts():
    # "germany" is a substring of the lower-cased answer -> exact 1; normalised: "germany" in
    # "germany and is also its most populous city" -> 1
    assert _scores("Berlin<OR>Germany", "Germany, and is also its most populous city") == (1.0, 1.0)
    # neither "berlin" nor "germany" occurs -> 0 / 0
    assert _scores("Berlin<OR>Germany", "It lies in Europe.") == (0.0, 0.0)


def test_and_needs_every_target():
    params = dict(target_output_delimiter="<AND>", logical_operator="AND")
    # red, yellow and blue all occur -> min(1, 1, 1) = 1
    assert _scores("Red<AND>Yellow<AND>Blue", "Red, yellow, and blue.", **params) == (1.0, 1.0)
    # "yellow" missing -> min(1, 0, 1) = 0
    assert _scores("Red<AND>Yellow<AND>Blue", "Red and blue.", **params) == (0.0, 0.0)


def test_and_failure_message_names_missing_targets():
    (result,) = score_rows(
        FactualKnowledgeEvaluator, [_row("Red<AND>Yellow<AND>Blue", "Red and blue.")],
        target_output_delimiter="<AND>", logical_operator="AND",
    )
    assert result.error_message == "answer lacks target(s): 'Yellow'"
    assert result.details == {"matched_targets": ["Red", "Blue"], "matched_targets_quasi_exact": ["Red", "Blue"]}


def test_or_failure_message_and_details():
    (miss,) = score_rows(FactualKnowledgeEvaluator, [_row("Berlin<OR>Germany", "Paris")])
    assert miss.error_message == "answer contains none of: 'Berlin', 'Germany'"
    assert miss.details == {"matched_targets": [], "matched_targets_quasi_exact": []}
    (hit,) = score_rows(FactualKnowledgeEvaluator, [_row("Berlin<OR>Germany", "germany")])
    assert hit.error_message is None
    assert hit.details["matched_targets"] == ["Germany"]


def test_custom_delimiter_with_either_operator():
    # "|" names no operator, so both OR and AND accept it
    assert _scores("UK|England", "It is England.", target_output_delimiter="|") == (1.0, 1.0)
    # AND: "uk" missing from "it is england." -> 0
    assert _scores("UK|England", "It is England.", target_output_delimiter="|", logical_operator="AND") == (0.0, 0.0)
    # AND: both "uk" and "england" present -> 1
    assert _scores("UK|England", "England, UK", target_output_delimiter="|", logical_operator="AND") == (1.0, 1.0)
    # with the default "<OR>" delimiter the "|" string is one target: "uk|england" not in answer -> 0
    assert _scores("UK|England", "It is England.") == (0.0, 0.0)


def test_null_delimiter_means_the_default():
    # None is the default "<OR>": targets "Berlin" and "Germany"; "germany" is in "germany" -> 1 / 1
    assert _scores("Berlin<OR>Germany", "Germany", target_output_delimiter=None) == (1.0, 1.0)
    # neither "berlin" nor "germany" is in "paris" -> 0 / 0
    assert _scores("Berlin<OR>Germany", "Paris", target_output_delimiter=None) == (0.0, 0.0)


# -- exact versus quasi-exact -------------------------------------------------------------------


def test_article_in_target_only_matches_quasi_exact():
    # exact: "the united states" not in "united states" -> 0
    # quasi: "united states" in "united states" -> 1
    assert _scores("The United States", "United States") == (0.0, 1.0)


def test_punctuation_in_target_only_matches_quasi_exact():
    # exact: "u.s.a." not in "the usa won." -> 0
    # quasi: normalize("U.S.A.") = "usa"; normalize("The USA won.") = "usa won" -> 1
    assert _scores("U.S.A.", "The USA won.") == (0.0, 1.0)


def test_deleted_hyphen_joins_words():
    # punctuation is deleted, not replaced by a space: "eiffel-tower" -> "eiffeltower",
    # which does not contain "eiffel tower" -> quasi 0; exact "eiffel tower" also absent -> 0
    assert _scores("Eiffel Tower", "the Eiffel-Tower") == (0.0, 0.0)


def test_repeated_spaces_only_match_quasi_exact():
    # exact: "new york" not in "new   york" -> 0; quasi collapses the spaces -> 1
    assert _scores("New York", "New   York") == (0.0, 1.0)


def test_exact_can_pass_where_quasi_fails():
    # exact: "o t" is a substring of "go the way" -> 1
    # quasi: "o t" is not in normalize("go the way") = "go way" -> 0
    assert _scores("o t", "go the way") == (1.0, 0.0)


def test_target_whitespace_is_stripped():
    # "  Paris \n" -> "paris", a substring of "paris is the capital" for both metrics
    assert _scores("  Paris \n", "Paris is the capital") == (1.0, 1.0)


# -- unicode, empty, multi-line -----------------------------------------------------------------


def test_unicode():
    # "são paulo" in "são paulo é a maior cidade" -> 1 / 1
    assert _scores("São Paulo", "SÃO PAULO é a maior cidade") == (1.0, 1.0)
    # exact: "köln!" not in "köln" -> 0; quasi: "köln" in "köln" -> 1
    assert _scores("Köln!", "köln") == (0.0, 1.0)
    # « » are not ASCII punctuation, so they stay: "«berlin»" not in "berlin" -> 0 / 0
    assert _scores("«Berlin»", "Berlin") == (0.0, 0.0)
    # CJK: "東京" is a substring of "首都は東京です。" -> 1 / 1
    assert _scores("東京", "首都は東京です。") == (1.0, 1.0)


def test_empty_answer():
    # no non-blank target is contained in "" -> 0 / 0, with a message
    (result,) = score_rows(FactualKnowledgeEvaluator, [_row("Berlin", "")])
    assert (result.values[FK], result.values[QE]) == (0.0, 0.0)
    assert result.error_message == "answer contains none of: 'Berlin'"


def test_multi_line_answer():
    # "berlin" occurs on the second line -> 1 / 1
    assert _scores("Berlin", "The capital is\nBerlin.\nIt is large.") == (1.0, 1.0)
    # "capital is berlin": exact fails on the newline; quasi too, because fmeval's protocol only
    # splits on spaces, so "is\nberlin" stays one word -> 0 / 0
    assert _scores("capital is Berlin", "The capital is\nBerlin.") == (0.0, 0.0)


def test_blank_alternatives_are_ignored():
    # "Berlin<OR>" splits into "Berlin" and "": the blank one is dropped, else every answer
    # would pass; "berlin" not in "paris" -> 0 / 0
    assert _scores("Berlin<OR>", "Paris") == (0.0, 0.0)
    assert _scores("Berlin<OR> <OR>", "in Berlin") == (1.0, 1.0)


def test_expected_answer_with_no_target_is_not_scored():
    (result,) = score_rows(FactualKnowledgeEvaluator, [_row("<OR> <OR>", "anything")])
    assert result.values == {FK: None, QE: None}
    assert result.error_message == "expected answer holds no target after splitting on '<OR>'"


def test_target_that_normalises_to_nothing_falls_back_to_exact():
    # normalize("The") = "" would be "in" every answer; the quasi test uses exact inclusion
    # instead: "the" not in "paris" -> 0 / 0, and "the" in "the answer" -> 1 / 1
    assert _scores("The", "Paris") == (0.0, 0.0)
    assert _scores("The", "The answer") == (1.0, 1.0)


def test_several_models_means():
    # model a: rows 1, 1, 0 -> exact mean 2/3; quasi: "The Alps" vs "alps" -> exact 0 but quasi 1,
    #          so quasi rows 1, 1, 1 -> mean 3/3 = 1
    # model b: rows 0, 0, 1 -> exact mean 1/3; quasi rows 0, 0, 1 -> 1/3
    cases = [
        ("c1", "Berlin<OR>Germany", {"a": "Berlin.", "b": "Paris."}),
        ("c2", "Rome", {"a": "It is Rome", "b": "Milan"}),
        ("c3", "The Alps", {"a": "alps", "b": "the alps"}),
    ]
    rows = [_row(exp, ans[m], model=m, case=c) for c, exp, ans in cases for m in ("a", "b")]
    results = score_rows(FactualKnowledgeEvaluator, rows)
    by_model = {}
    for row, res in zip(rows, results):
        by_model.setdefault(row.model_key, []).append((res.values[FK], res.values[QE]))
    assert by_model["a"] == [(1.0, 1.0), (1.0, 1.0), (0.0, 1.0)]
    assert by_model["b"] == [(0.0, 0.0), (0.0, 0.0), (1.0, 1.0)]


def test_evaluate_in_batches_matches_one_call():
    # targets are cached per expected answer; a second batch must reuse them correctly
    evaluator = FactualKnowledgeEvaluator(FactualKnowledgeEvaluator.validate_params({}), None)
    first = list(evaluator.evaluate([_row("Berlin<OR>Germany", "Berlin")]))
    second = list(evaluator.evaluate([_row("Berlin<OR>Germany", "Paris"), _row("Rome", "rome")]))
    assert [r.values[FK] for r in first + second] == [1.0, 0.0, 1.0]


# -- parameter validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"target_output_delimiter": ""},
            "parameter 'target_output_delimiter' of evaluator 'factual_knowledge': must not be empty "
            "(give a string such as '<OR>' that separates the targets)",
        ),
        (
            {"logical_operator": "XOR"},
            "parameter 'logical_operator' of evaluator 'factual_knowledge' must be one of 'OR', 'AND', got 'XOR'",
        ),
        (
            {"logical_operator": "or"},
            "parameter 'logical_operator' of evaluator 'factual_knowledge' must be one of 'OR', 'AND', got 'or'",
        ),
        (
            # the default delimiter "<OR>" with AND
            {"logical_operator": "AND"},
            "parameter 'target_output_delimiter' of evaluator 'factual_knowledge': '<OR>' contradicts "
            "logical_operator 'AND' (use '<AND>' or a delimiter that names no operator)",
        ),
        (
            {"target_output_delimiter": "<AND>"},
            "parameter 'target_output_delimiter' of evaluator 'factual_knowledge': '<AND>' contradicts "
            "logical_operator 'OR' (use '<OR>' or a delimiter that names no operator)",
        ),
        (
            {"target_output_delimiter": 5},
            "parameter 'target_output_delimiter' of evaluator 'factual_knowledge' must be of type str, got 5",
        ),
    ],
)
def test_parameter_errors(params, message):
    with pytest.raises(ParameterError) as info:
        FactualKnowledgeEvaluator.validate_params(params)
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_valid_combinations_accepted():
    ok = FactualKnowledgeEvaluator.validate_params({"target_output_delimiter": "<AND>", "logical_operator": "AND"})
    assert ok["target_output_delimiter"] == "<AND>" and ok["logical_operator"] == "AND"
    assert FactualKnowledgeEvaluator.validate_params({"target_output_delimiter": ";", "logical_operator": "AND"}) == {
        "target_output_delimiter": ";", "logical_operator": "AND", "metric_threshold": None, "save_llm_result": True,
    }
    # null means the declared default, so both nulls give "<OR>" with "OR"
    nulls = FactualKnowledgeEvaluator.validate_params({"target_output_delimiter": None, "logical_operator": None})
    assert (nulls["target_output_delimiter"], nulls["logical_operator"]) == ("<OR>", "OR")


def test_null_delimiter_with_and_is_the_default_that_contradicts_it():
    # null -> "<OR>", which names the other operator
    with pytest.raises(ParameterError) as info:
        FactualKnowledgeEvaluator.validate_params({"target_output_delimiter": None, "logical_operator": "AND"})
    assert str(info.value) == (
        "parameter 'target_output_delimiter' of evaluator 'factual_knowledge': '<OR>' contradicts "
        "logical_operator 'AND' (use '<AND>' or a delimiter that names no operator)"
    )
