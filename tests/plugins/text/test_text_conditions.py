"""The condition language: parsing, precedence, escapes, evaluation, failed parts, errors."""

from __future__ import annotations

import time

import pytest

from sonar_plugins.text.conditions import (
    And,
    ConditionOutcome,
    ConditionSyntaxError,
    Literal,
    Not,
    Or,
    Regexp,
    RegexTimeout,
    all_of,
    constraints_condition,
    parse_condition,
    quote,
)
from slow_regex import SLOW, SLOW_TEXT

T = 1.0  # regex time bound (seconds) for evaluations that are never slow


def holds(condition: str, text: str) -> bool:
    return parse_condition(condition).evaluate(text, T).ok


# -- structure and precedence -------------------------------------------------------------


def test_single_string_is_a_literal_with_its_source():
    node = parse_condition('"15,969"')
    assert node == Literal(source='"15,969"', value="15,969")


def test_and_binds_tighter_than_or():
    node = parse_condition('"a" OR "b" AND "c"')
    assert isinstance(node, Or)
    assert [o.source for o in node.operands] == ['"a"', '"b" AND "c"']
    assert isinstance(node.operands[1], And)
    # "a" alone satisfies a OR (b AND c); it would fail (a OR b) AND c.
    assert holds('"a" OR "b" AND "c"', "a")
    assert not holds('("a" OR "b") AND "c"', "a")


def test_not_binds_tighter_than_and_and_or():
    node = parse_condition('NOT "a" AND "b"')
    assert isinstance(node, And) and isinstance(node.operands[0], Not)
    # (NOT a) AND b on "": b is missing -> False; NOT (a AND b) would be True.
    assert not holds('NOT "a" AND "b"', "")
    assert holds('NOT ("a" AND "b")', "")
    # (NOT a) OR b on "ab": b present -> True; NOT (a OR b) would be False.
    assert holds('NOT "a" OR "b"', "ab")
    assert not holds('NOT ("a" OR "b")', "ab")


def test_and_or_chains_are_flat():
    node = parse_condition('"a" AND "b" AND "c" OR "d" OR "e"')
    assert isinstance(node, Or) and len(node.operands) == 3
    assert node.operands[0].source == '"a" AND "b" AND "c"'
    assert len(node.operands[0].operands) == 3


def test_double_not_cancels():
    node = parse_condition('NOT NOT "a"')
    assert node == Not(source='NOT NOT "a"', operand=Not(source='NOT "a"', operand=Literal(source='"a"', value="a")))
    assert holds('NOT NOT "a"', "a") and not holds('NOT NOT "a"', "b")


def test_nested_parentheses_keep_their_text_as_source():
    node = parse_condition('((("a")))')
    assert node == Literal(source='((("a")))', value="a")
    deep = parse_condition('("a" OR ("b" AND NOT ("c" OR "d")))')
    assert isinstance(deep, Or)
    inner = deep.operands[1]
    assert inner.source == '("b" AND NOT ("c" OR "d"))'
    assert inner.operands[1].source == 'NOT ("c" OR "d")'
    assert holds('("a" OR ("b" AND NOT ("c" OR "d")))', "b")
    assert not holds('("a" OR ("b" AND NOT ("c" OR "d")))', "b d")


def test_whitespace_is_free_and_optional():
    node = parse_condition('"a"AND"b"')
    assert isinstance(node, And) and [o.source for o in node.operands] == ['"a"', '"b"']
    assert holds('\n\t"a"\n AND\tNOT\r\n"b" ', "a")
    assert holds('regexp ( "x+" )', "xx")


def test_parse_results_are_cached():
    assert parse_condition('"cached" AND "twice"') is parse_condition('"cached" AND "twice"')


# -- escapes --------------------------------------------------------------------------------


def test_escaped_quote_and_backslash_in_strings():
    assert parse_condition(r'"say \"hi\""').value == 'say "hi"'
    assert parse_condition(r'"back\\slash"').value == "back\\slash"
    # Any other backslash is kept, so regex escapes need no doubling.
    assert parse_condition(r'"C:\temp"').value == "C:\\temp"
    assert holds(r'"say \"hi\""', 'They say "hi".')


def test_regexp_pattern_escapes():
    node = parse_condition(r'regexp("\d{3}-\d{4}")')
    assert isinstance(node, Regexp) and node.pattern == r"\d{3}-\d{4}"
    assert holds(r'regexp("\d{3}-\d{4}")', "call 555-1234")
    assert parse_condition(r'regexp("a\"b")').pattern == 'a"b'
    # \\ is one backslash, so \\. in the condition is the regex \. (a literal dot).
    assert holds(r'regexp("1\\.5")', "1.5") and not holds(r'regexp("1\\.5")', "105")


def test_quote_round_trips():
    for value in ["plain", 'x"y', "a\\", "\\d+", "\\\\d", '\\"', "", "ünï 😀"]:
        assert parse_condition(quote(value)).value == value
    assert quote("\\d+") == '"\\d+"'  # readable: no doubling where none is needed
    assert quote('a"b\\') == '"a\\"b\\\\"'


# -- evaluation -----------------------------------------------------------------------------


def test_substring_match_is_case_sensitive():
    assert holds('"Brazil"', "Brazil") and not holds('"Brazil"', "brazil")
    assert holds('"Brazil" OR "brazil"', "brazil")


def test_regexp_searches_anywhere_and_honours_inline_flags():
    assert holds('regexp("[Mm]illion")', "15 million dollars")
    assert holds('regexp("(?i)python")', "I like PyThOn")
    assert not holds('regexp("^million")', "15 million")


def test_unicode_and_multiline_text():
    assert holds('"ünïcödé" AND regexp("日本.")', "Some ünïcödé and 日本語")
    text = "line one\nBrazil revenue was 15,969 million\nline three"
    assert holds('regexp("(?m)^Brazil revenue was 15,969 million$")', text)
    assert not holds('regexp("^Brazil revenue was 15,969 million$")', text)


def test_empty_text():
    assert not holds('"x"', "")
    assert holds('NOT "x"', "")
    assert holds('regexp("^$")', "")
    assert holds('""', "")  # the empty string is in every text


def test_failed_part_names_the_sub_expression():
    c = parse_condition('("Brazil" OR "brazil") AND regexp("15,?969 [Mm]illion") AND NOT "Real"')
    assert c.evaluate("Brazil revenue was 15,969 million", T) == ConditionOutcome(True, None)
    assert c.evaluate("Argentina revenue was 15,969 million", T) == ConditionOutcome(False, '("Brazil" OR "brazil")')
    assert c.evaluate("Brazil revenue was 15,969 bn", T) == ConditionOutcome(False, 'regexp("15,?969 [Mm]illion")')
    assert c.evaluate("Brazil revenue was 15969 Million Real", T) == ConditionOutcome(False, 'NOT "Real"')
    # AND reports its first failing operand; a bare OR reports itself.
    assert parse_condition('"a" AND "b" AND "c"').evaluate("a c", T) == ConditionOutcome(False, '"b"')
    assert parse_condition('"a" OR "b"').evaluate("c", T) == ConditionOutcome(False, '"a" OR "b"')
    assert parse_condition('NOT ("a" AND "b")').evaluate("ab", T) == ConditionOutcome(False, 'NOT ("a" AND "b")')


def test_regex_timeout_is_raised_quickly_with_the_pattern():
    # (a|aa)+$ backtracks exponentially on a run of a's that does not end the text.
    condition = parse_condition(SLOW)
    started = time.process_time()  # the regex package's bound is CPU time of the process
    with pytest.raises(RegexTimeout) as info:
        condition.evaluate(SLOW_TEXT, 0.3)
    assert time.process_time() - started < 2.0
    assert str(info.value) == "regular expression '(a|aa)+$' timed out after 0.3 s"


def test_and_short_circuits_before_a_slow_regexp():
    # The first operand fails, so the catastrophic pattern never runs.
    outcome = parse_condition(f'"missing" AND {SLOW}').evaluate(SLOW_TEXT, 0.3)
    assert outcome == ConditionOutcome(False, '"missing"')


# -- the catalogue's examples ---------------------------------------------------------------


def test_catalogue_example_1_plain_string():
    assert holds('"15,969"', "Revenue was 15,969 million")
    assert not holds('"15,969"', "Revenue was 15969 million")


def test_catalogue_example_2_regexp():
    assert holds('regexp("15,?969")', "Revenue was 15,969 million")
    assert holds('regexp("15,?969")', "Revenue was 15969 million")
    assert not holds('regexp("15,?969")', "Revenue was 15.969 million")


def test_catalogue_example_3_string_and_regexp():
    c = '"15,969" AND regexp("[Mm]illion")'
    assert holds(c, "15,969 Million") and holds(c, "15,969 million")
    assert not holds(c, "15969 million") and not holds(c, "15,969 billion")


def test_catalogue_example_4_or_and_not():
    c = '("Brazil" OR "brazil") AND regexp("15,?969 [Mm]illion") AND NOT "Real"'
    assert holds(c, "brazil: 15969 Million USD")
    assert not holds(c, "Brazil: 15,969 million Real")
    assert not holds(c, "BRAZIL: 15,969 million")


def test_catalogue_example_5_anchored_regexp():
    # As printed, the catalogue's pattern starts with ^$, which no text can satisfy before
    # "Brazil"; the anchored form it describes is ^...$.
    printed = 'regexp("^$Brazil revenue was 15,969 million$")'
    assert not holds(printed, "Brazil revenue was 15,969 million")
    exact = 'regexp("^Brazil revenue was 15,969 million$")'
    assert holds(exact, "Brazil revenue was 15,969 million")
    assert not holds(exact, "In short, Brazil revenue was 15,969 million")


# -- constraints ----------------------------------------------------------------------------


def test_constraints_are_an_and_of_literals():
    c = constraints_condition(["15,969", 'the "Real"'])
    assert c.source == '"15,969" AND "the \\"Real\\""'
    assert c.evaluate('15,969 in the "Real"', T).ok
    assert c.evaluate("15,969 in Real", T) == ConditionOutcome(False, '"the \\"Real\\""')
    single = constraints_condition(["only"])
    assert single == Literal(source='"only"', value="only")
    assert constraints_condition([]).evaluate("", T).ok


def test_constraints_regexp_prefix_as_in_h2o_sonar():
    c = constraints_condition(["Brazil", r"REGEXP:15,?969"])
    assert c.source == '"Brazil" AND regexp("15,?969")'
    assert c.evaluate("Brazil 15969", T).ok
    assert c.evaluate("Brazil 15.969", T) == ConditionOutcome(False, 'regexp("15,?969")')


def test_all_of_combines_condition_and_constraints():
    c = all_of(parse_condition('"a" OR "b"'), constraints_condition(["c"]))
    assert c.source == '("a" OR "b") AND ("c")'
    assert c.evaluate("b c", T).ok
    assert c.evaluate("b", T) == ConditionOutcome(False, '"c"')


# -- errors: every message exactly ----------------------------------------------------------

OPERAND = 'expected "text", regexp("pattern"), NOT or \'(\''


@pytest.mark.parametrize(
    "source, message",
    [
        ("", "empty condition"),
        ("   \n", "empty condition"),
        ('("a"', "expected ')' at position 4, found end of condition (to close '(' at position 0)"),
        ('("a" OR ("b" AND "c")', "expected ')' at position 21, found end of condition (to close '(' at position 0)"),
        ('"a" "b"', "expected AND, OR or end of condition at position 4, found '\"b\"'"),
        ('"a" ) AND "b"', "expected AND, OR or end of condition at position 4, found ')'"),
        (")", f"{OPERAND} at position 0, found ')'"),
        ("NOT", f"{OPERAND} at position 3, found end of condition"),
        ('"a" AND', f"{OPERAND} at position 7, found end of condition"),
        ('"a" OR OR "b"', f"{OPERAND} at position 7, found 'OR'"),
        ("()", f"{OPERAND} at position 1, found ')'"),
        ("and", f"{OPERAND} at position 0, found unknown word 'and' (did you mean 'AND'?)"),
        ('"a" and "b"', "expected AND, OR or end of condition at position 4, found unknown word 'and' (did you mean 'AND'?)"),
        ('"a" OR foo', f"{OPERAND} at position 7, found unknown word 'foo'"),
        ('Regexp("a")', f"{OPERAND} at position 0, found unknown word 'Regexp' (did you mean 'regexp'?)"),
        ('"abc', "unterminated string starting at position 0"),
        ('"a" AND "b\\"', "unterminated string starting at position 8"),
        ('"a" & "b"', "unexpected character '&' at position 4"),
        ("'a'", "unexpected character \"'\" at position 0"),
        ('regexp "x"', "expected '(' after regexp at position 7, found '\"x\"'"),
        ("regexp(x)", "expected a quoted pattern in regexp(\"...\") at position 7, found unknown word 'x'"),
        ('regexp("x"', "expected ')' at position 10, found end of condition (to close regexp( at position 0)"),
        ('"x" AND regexp("[a")', "invalid regular expression '[a' (regexp at position 8): unterminated character set at position 2"),
        ('regexp("(")', "invalid regular expression '(' (regexp at position 0): missing ) at position 1"),
        ("(" * 101 + '"a"' + ")" * 101, "condition nested deeper than 100 levels at position 100"),
        ("NOT " * 101 + '"a"', "condition nested deeper than 100 levels at position 400"),
    ],
)
def test_syntax_error_messages(source, message):
    with pytest.raises(ConditionSyntaxError) as info:
        parse_condition(source)
    assert str(info.value) == message


def test_nesting_up_to_the_limit_is_fine():
    assert holds("(" * 100 + '"a"' + ")" * 100, "a")


def test_syntax_error_is_a_value_error():
    assert issubclass(ConditionSyntaxError, ValueError)


def test_invalid_constraint_regexp_names_the_constraint():
    with pytest.raises(ConditionSyntaxError) as info:
        constraints_condition(["ok", "REGEXP:("])
    assert str(info.value) == "invalid regular expression '(' (constraint 2): missing ) at position 1"
