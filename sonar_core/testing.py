"""Helpers for testing evaluators without a full run (used by Sonar's tests and plugin authors)."""

from __future__ import annotations

from typing import Any

from .findings import ScoredEvaluator
from .context import EvaluationContext
from .contract import Evaluator, RowResult
from .dataset import Row, row_from_record

__all__ = ["make_row", "score_rows", "model_means"]


def make_row(**fields: Any) -> Row:
    """A validated Row from keyword fields (same rules as a dataset file's row)."""
    fields.setdefault("input", "question")
    return row_from_record(fields, "<test row>", 1)


def score_rows(evaluator_cls: type[Evaluator], rows: list[Row], **params: Any) -> list[RowResult]:
    """Validate ``params``, build the evaluator with a default context and score ``rows``."""
    evaluator = evaluator_cls(evaluator_cls.validate_params(params), EvaluationContext())
    results = list(evaluator.evaluate(rows))
    if len(results) != len(rows):
        raise AssertionError(f"{evaluator_cls.id} returned {len(results)} results for {len(rows)} rows")
    return results


def model_means(evaluator_cls: type[Evaluator], rows: list[Row], results: list[RowResult]) -> dict[str, dict]:
    """model -> metric key -> mean, computed by the core's own aggregation of these rows."""
    scored = ScoredEvaluator(cls=evaluator_cls, params={}, thresholds={}, scored=list(zip(rows, results)))
    return scored.aggregates()
