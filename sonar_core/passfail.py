"""A base for pass/fail evaluators: one verdict per row becomes the standard 0/1 metrics.

Text matching, PII leakage, sensitive data leakage and the encoding guardrail all decide,
for each row, whether the actual answer passes, whether the retrieved context passes, and
whether the check could be made at all. :class:`PassFailEvaluator` turns that verdict into
per-row values of metrics with the roles pass / fail / retrieval failure / generation
failure / parse failure, whatever the evaluator calls them.

Per-row values (each 0 or 1; a model's mean is then the share of its rows):
  pass               answer checked and passed
  fail               answer checked and failed
  generation failure the same as fail (the catalogue defines them as equivalent)
  retrieval failure  the retrieved context was checked and failed
  parse failure      the check could not be made (e.g. a malformed condition)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Iterable, Sequence

from .contract import Evaluator, MetricRole, ResultKind, RowResult
from .jsontypes import JsonObject
from .dataset import Row

__all__ = ["Verdict", "PassFailEvaluator"]

_ONE, _ZERO = 1.0, 0.0


@dataclass
class Verdict:
    """The outcome of checking one row.

    Attributes:
        answer_ok: the actual answer passed the check.
        context_ok: the retrieved context passed; None when it was not checked.
        parse_error: why the check could not be made; when set, the other flags are ignored.
        error_message: which part of the check failed (``result_error_message``).
        details: extra facts for the row (e.g. masked matches).
    """

    answer_ok: bool = True
    context_ok: bool | None = None
    parse_error: str | None = None
    error_message: str | None = None
    details: JsonObject = field(default_factory=dict)


class PassFailEvaluator(Evaluator):
    """Implement :meth:`check`; the 0/1 metric values follow from the metric roles."""

    kind: ClassVar[ResultKind] = ResultKind.BOOL

    def check(self, row: Row) -> Verdict:
        raise NotImplementedError

    @classmethod
    def declaration_problem(cls) -> str | None:
        """The base's problems, then: a pass/fail evaluator implements :meth:`check` (or its own
        :meth:`evaluate`)."""
        problem = super().declaration_problem()
        if problem is None and cls.check is PassFailEvaluator.check and cls.evaluate is PassFailEvaluator.evaluate:
            problem = f"{cls.__name__} does not implement check()"
        return problem

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        for row in rows:
            yield self.verdict_to_result(self.check(row))

    @classmethod
    def verdict_to_result(cls, verdict: Verdict) -> RowResult:
        parsed = verdict.parse_error is None
        # The two float objects are shared by every row's values (a run holds them all).
        by_role = {
            MetricRole.PASS: _ONE if parsed and verdict.answer_ok else _ZERO,
            MetricRole.FAIL: _ONE if parsed and not verdict.answer_ok else _ZERO,
            MetricRole.GENERATION_FAILURE: _ONE if parsed and not verdict.answer_ok else _ZERO,
            MetricRole.RETRIEVAL_FAILURE: _ONE if parsed and verdict.context_ok is False else _ZERO,
            MetricRole.PARSE_FAILURE: _ZERO if parsed else _ONE,
        }
        values = {m.key: by_role[m.role] for m in cls.metrics if m.role is not None}
        details = dict(verdict.details)
        if verdict.parse_error is not None:
            details["parse_error"] = verdict.parse_error
        message = verdict.parse_error if not parsed else verdict.error_message
        return RowResult(values=values, details=details, error_message=message)
