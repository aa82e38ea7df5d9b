"""The condition language of text matching: a tokenizer, a recursive-descent parser, an AST.

A condition is a boolean expression over the text it is checked against::

    ("Brazil" OR "brazil") AND regexp("15,?969 [Mm]illion") AND NOT "Real"

Grammar (precedence NOT > AND > OR; AND and OR are left-associative and n-ary)::

    condition := or_expr END
    or_expr   := and_expr ("OR" and_expr)*
    and_expr  := not_expr ("AND" not_expr)*
    not_expr  := "NOT" not_expr | primary
    primary   := STRING | "regexp" "(" STRING ")" | "(" or_expr ")"

Operands:

* ``"text"`` holds when the text contains ``text`` (case-sensitive substring).
* ``regexp("pattern")`` holds when ``pattern`` matches anywhere in the text (a search, not a
  full match; anchor with ``^``/``$`` for an exact match). Patterns run on the ``regex``
  package with a time bound, so a catastrophic pattern cannot hang a run. The package
  counts that bound in CPU time of the whole process: with other busy threads it fires
  sooner, on an overloaded machine the wall clock may run past it.

Inside double quotes ``\\"`` is a quote and ``\\\\`` one backslash; any other backslash is kept
as written, so regular-expression escapes such as ``\\d`` or ``\\b`` need no doubling.
Operator words are upper case. Positions in error messages are 0-based character offsets
into the condition.

Evaluation reports not only whether a condition holds but which part made it fail (the
source text of that sub-expression), so a failed row can say what did not match.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterator

import regex

__all__ = ["ConditionSyntaxError", "RegexTimeout", "ConditionOutcome", "Condition", "Literal", "Regexp", "Not",
           "And", "Or", "parse_condition", "constraints_condition", "all_of", "quote"]

#: Deepest nesting of parentheses and NOTs accepted; deeper input is an error, not a crash.
MAX_DEPTH = 100

#: H2O Sonar's output_constraints mark a regular expression with this prefix.
CONSTRAINT_REGEXP_PREFIX = "REGEXP:"


class ConditionSyntaxError(ValueError):
    """A malformed condition; the message says what is wrong and at which position."""


class RegexTimeout(Exception):
    """A regular expression ran longer than its time bound; the message names the pattern."""


@dataclass(frozen=True)
class ConditionOutcome:
    """Whether a condition held, and if not, the source text of the part that failed."""

    ok: bool
    failed_part: str | None = None


# -- AST -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """Base of the AST nodes. ``source`` is the node's own text in the condition."""

    source: str

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        """Check ``text``; ``timeout_s`` bounds each regular-expression search (seconds).

        Raises:
            RegexTimeout: a regular expression ran out of time.
        """
        raise NotImplementedError


_PASS = ConditionOutcome(True, None)


@dataclass(frozen=True)
class Literal(Condition):
    """Holds when the text contains ``value`` (case-sensitive)."""

    value: str = ""

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        return _PASS if self.value in text else ConditionOutcome(False, self.source)


@dataclass(frozen=True)
class Regexp(Condition):
    """Holds when ``pattern`` matches somewhere in the text."""

    pattern: str = ""
    compiled: regex.Pattern | None = None

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        try:
            found = self.compiled.search(text, timeout=timeout_s)
        except TimeoutError:
            raise RegexTimeout(
                f"regular expression '{self.pattern}' timed out after {timeout_s:g} s"
            ) from None
        return _PASS if found is not None else ConditionOutcome(False, self.source)


@dataclass(frozen=True)
class Not(Condition):
    """Holds when ``operand`` does not; when it fails, the whole NOT is the failed part."""

    operand: Condition | None = None

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        inner = self.operand.evaluate(text, timeout_s)
        return ConditionOutcome(False, self.source) if inner.ok else _PASS


@dataclass(frozen=True)
class And(Condition):
    """Holds when every operand holds; stops at, and reports, the first that fails."""

    operands: tuple[Condition, ...] = ()

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        for operand in self.operands:
            outcome = operand.evaluate(text, timeout_s)
            if not outcome.ok:
                return outcome
        return _PASS


@dataclass(frozen=True)
class Or(Condition):
    """Holds when any operand holds; when none does, the whole OR is the failed part."""

    operands: tuple[Condition, ...] = ()

    def evaluate(self, text: str, timeout_s: float) -> ConditionOutcome:
        for operand in self.operands:
            if operand.evaluate(text, timeout_s).ok:
                return _PASS
        return ConditionOutcome(False, self.source)


# -- tokenizer -------------------------------------------------------------------------------

_STRING, _WORD, _LPAREN, _RPAREN, _AND, _OR, _NOT, _REGEXP, _END = (
    "string", "word", "(", ")", "AND", "OR", "NOT", "regexp", "end",
)
_KEYWORDS = {"AND": _AND, "OR": _OR, "NOT": _NOT, "regexp": _REGEXP}


@dataclass(frozen=True)
class _Token:
    kind: str
    start: int  # offset of the token's first character
    end: int  # offset just past its last character
    value: str = ""  # the unescaped content of a string token

    def describe(self, source: str) -> str:
        """How an error message names this token."""
        if self.kind == _END:
            return "end of condition"
        text = source[self.start : self.end]
        if self.kind == _WORD:
            for keyword in _KEYWORDS:
                if text.lower() == keyword.lower():
                    return f"unknown word {text!r} (did you mean {keyword!r}?)"
            return f"unknown word {text!r}"
        return repr(text)


def _read_string(source: str, start: int) -> tuple[str, int]:
    """Unescape the string literal whose opening quote is at ``start``; return (value, end)."""
    chars: list[str] = []
    i = start + 1
    while i < len(source):
        char = source[i]
        if char == '"':
            return "".join(chars), i + 1
        if char == "\\" and i + 1 < len(source) and source[i + 1] in '"\\':
            chars.append(source[i + 1])
            i += 2
            continue
        # Any other backslash stays, so regex escapes (\d, \b, \.) reach the regex engine.
        chars.append(char)
        i += 1
    raise ConditionSyntaxError(f"unterminated string starting at position {start}")


def _tokenize(source: str) -> Iterator[_Token]:
    """Yield tokens lazily, so errors surface in the order of their positions."""
    i, n = 0, len(source)
    while i < n:
        char = source[i]
        if char.isspace():
            i += 1
        elif char == '"':
            value, end = _read_string(source, i)
            yield _Token(_STRING, i, end, value)
            i = end
        elif char in "()":
            yield _Token(char, i, i + 1)
            i += 1
        elif char.isalnum() or char == "_":
            end = i
            while end < n and (source[end].isalnum() or source[end] == "_"):
                end += 1
            # Unknown words become tokens too: the parser says what it expected instead.
            yield _Token(_KEYWORDS.get(source[i:end], _WORD), i, end)
            i = end
        else:
            raise ConditionSyntaxError(f"unexpected character {char!r} at position {i}")
    yield _Token(_END, n, n)


# -- parser ----------------------------------------------------------------------------------


_OPERAND_EXPECTED = '"text", regexp("pattern"), NOT or \'(\''


class _Parser:
    """Recursive descent over the token list; each method parses one grammar rule."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = _tokenize(source)
        self.current = next(self.tokens)
        self.previous: _Token | None = None
        self.depth = 0

    def advance(self) -> _Token:
        """Consume the current token and return it."""
        self.previous, self.current = self.current, next(self.tokens)
        return self.previous

    def unexpected(self, expected: str, note: str = "") -> ConditionSyntaxError:
        """The error for a current token that is not what the grammar allows here."""
        token = self.current
        message = f"expected {expected} at position {token.start}, found {token.describe(self.source)}"
        return ConditionSyntaxError(f"{message} ({note})" if note else message)

    def text(self, start: int, end: int) -> str:
        return self.source[start:end]

    def parse(self) -> Condition:
        if self.current.kind == _END:
            raise ConditionSyntaxError("empty condition")
        node = self.or_expr()
        if self.current.kind != _END:
            raise self.unexpected("AND, OR or end of condition")
        return node

    def or_expr(self) -> Condition:
        return self._chain(_OR, Or, self.and_expr)

    def and_expr(self) -> Condition:
        return self._chain(_AND, And, self.not_expr)

    def _chain(self, op_kind: str, node_cls: type, operand_rule) -> Condition:
        start = self.current.start
        operands = [operand_rule()]
        while self.current.kind == op_kind:
            self.advance()
            operands.append(operand_rule())
        if len(operands) == 1:
            return operands[0]
        end = self.previous.end
        return node_cls(source=self.text(start, end), operands=tuple(operands))

    def _enter(self, at: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConditionSyntaxError(f"condition nested deeper than {MAX_DEPTH} levels at position {at}")

    def not_expr(self) -> Condition:
        if self.current.kind != _NOT:
            return self.primary()
        token = self.advance()
        self._enter(token.start)
        operand = self.not_expr()
        self.depth -= 1
        end = self.previous.end
        return Not(source=self.text(token.start, end), operand=operand)

    def primary(self) -> Condition:
        token = self.current
        if token.kind == _STRING:
            self.advance()
            return Literal(source=self.text(token.start, token.end), value=token.value)
        if token.kind == _REGEXP:
            return self.regexp()
        if token.kind == _LPAREN:
            self.advance()
            self._enter(token.start)
            inner = self.or_expr()
            self.depth -= 1
            if self.current.kind != _RPAREN:
                raise self.unexpected("')'", f"to close '(' at position {token.start}")
            closing = self.advance()
            # The group's source keeps its parentheses, so a failed OR reads as written.
            return replace(inner, source=self.text(token.start, closing.end))
        raise self.unexpected(_OPERAND_EXPECTED)

    def regexp(self) -> Condition:
        keyword = self.advance()
        if self.current.kind != _LPAREN:
            raise self.unexpected("'(' after regexp")
        self.advance()
        if self.current.kind != _STRING:
            raise self.unexpected('a quoted pattern in regexp("...")')
        pattern = self.advance().value
        if self.current.kind != _RPAREN:
            raise self.unexpected("')'", f"to close regexp( at position {keyword.start}")
        closing = self.advance()
        return _make_regexp(self.text(keyword.start, closing.end), pattern, f"regexp at position {keyword.start}")


def _make_regexp(source: str, pattern: str, where: str) -> Regexp:
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ConditionSyntaxError(f"invalid regular expression {pattern!r} ({where}): {exc}") from None
    return Regexp(source=source, pattern=pattern, compiled=compiled)


@lru_cache(maxsize=4096)
def parse_condition(source: str) -> Condition:
    """Parse a condition into its AST (cached: the same condition recurs for every model).

    Raises:
        ConditionSyntaxError: the condition is malformed or holds an invalid pattern.
    """
    return _Parser(source).parse()


def quote(value: str) -> str:
    """``value`` as a condition string literal that parses back to ``value``.

    Only what the tokenizer would misread is escaped: quotes, and backslashes before a
    quote, a backslash or the end; so the pattern ``\\d+`` stays readable as ``"\\d+"``.
    """
    out: list[str] = []
    for i, char in enumerate(value):
        if char == '"':
            out.append('\\"')
        elif char == "\\" and (i + 1 == len(value) or value[i + 1] in '"\\'):
            out.append("\\\\")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def constraints_condition(constraints: list[str]) -> Condition:
    """The AND of H2O Sonar ``output_constraints``: every string must appear in the text.

    As in H2O Sonar, a constraint written ``REGEXP:<pattern>`` is a regular expression
    that must match instead of a literal. An empty list gives a condition that always holds.

    Raises:
        ConditionSyntaxError: a ``REGEXP:`` constraint holds an invalid pattern.
    """
    operands: list[Condition] = []
    for index, constraint in enumerate(constraints, start=1):
        if constraint.startswith(CONSTRAINT_REGEXP_PREFIX):
            pattern = constraint[len(CONSTRAINT_REGEXP_PREFIX) :]
            operands.append(_make_regexp(f"regexp({quote(pattern)})", pattern, f"constraint {index}"))
        else:
            operands.append(Literal(source=quote(constraint), value=constraint))
    if len(operands) == 1:
        return operands[0]
    return And(source=" AND ".join(o.source for o in operands), operands=tuple(operands))


def all_of(*conditions: Condition) -> Condition:
    """A condition that holds when all of ``conditions`` hold (reports the first failure)."""
    if len(conditions) == 1:
        return conditions[0]
    return And(source=" AND ".join(f"({c.source})" for c in conditions), operands=tuple(conditions))
