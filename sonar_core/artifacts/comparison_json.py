"""comparison.json (and ``sonar compare --json``): a :class:`~sonar_core.findings.comparison_types.Comparison`
in its JSON shape, declared once here as ``TypedDict`` s, keys in the order they are written.

The regressions are H2O's problems (problems_and_actions.json's keys, with the description's HTML
twin beside it) without the explainer keys: no explainer raised them.
"""

from __future__ import annotations

from html import escape
from typing import Mapping, TypedDict

from .. import names
from ..findings.comparison_types import (Comparison, EvaluatorComparison, MetricComparison, OneRunOnly,
                                         PairedComparison, SideMean)
from ..findings.types import Problem
from ..jsontypes import JsonValue

__all__ = ["ComparisonJson", "comparison_json"]


class SideJson(TypedDict):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str | None


class TestJson(TypedDict):
    test: str
    n: int
    delta: float
    p_value: float
    p_adjusted: float
    b: int | None
    c: int | None
    pairs_differing: int
    correction: str | None
    family_size: int


class FlipsJson(TypedDict):
    pass_to_fail: list[str]
    fail_to_pass: list[str]


class MetricJson(TypedDict):
    metric: str
    metric_name: str
    model: str
    higher_is_better: bool
    primary: bool
    threshold_a: float | None
    threshold_b: float | None
    a: SideJson
    b: SideJson
    delta: float | None
    test: TestJson | None
    flips: FlipsJson
    significant: bool
    regression: bool


class EvaluatorJson(TypedDict):
    label_a: str
    label_b: str
    evaluator_id: str
    parameters: Mapping[str, JsonValue]
    folder_a: str
    folder_b: str
    shared_rows: int
    rows_only_a: int
    rows_only_b: int
    test_cases_only_a: list[str]
    test_cases_only_b: list[str]
    metrics: list[MetricJson]


class OneRunOnlyJson(TypedDict):
    label: str
    evaluator_id: str | None
    parameters: Mapping[str, JsonValue] | None
    reason: str


class RunRefJson(TypedDict):
    run_id: str
    path: str


class PartialJson(TypedDict):
    status: str
    not_finished: dict[str, str]


class RegressionJson(TypedDict):
    schema_version: str
    description: str
    description_html: str
    actions_description: str
    actions_codes: list[str]
    evaluator_id: str
    evaluator_label: str
    resources: list[str]
    severity: str
    problem_type: str
    problem_attrs: dict[str, JsonValue]


ComparisonJson = TypedDict("ComparisonJson", {
    "schema_version": str, "sonar_version": str, "confidence_level": float, "bootstrap_resamples": int,
    "run_a": RunRefJson, "run_b": RunRefJson, "models": list[str], "models_only_a": list[str],
    "models_only_b": list[str], "test_cases_shared": int, "test_cases_only_a": list[str],
    "test_cases_only_b": list[str], "evaluators_only_a": list[OneRunOnlyJson],
    "evaluators_only_b": list[OneRunOnlyJson], "evaluators": list[EvaluatorJson], "problems": list[RegressionJson],
    "regressions": int, "partial": dict[str, PartialJson], "not_comparable": list[str]})


def _side(side: SideMean) -> SideJson:
    return {"value": side.value, "ci_low": side.ci_low, "ci_high": side.ci_high, "n": side.n, "method": side.method}


def _test(test: PairedComparison | None) -> TestJson | None:
    if test is None:
        return None
    return {"test": test.test, "n": test.n, "delta": test.delta, "p_value": test.p_value,
            "p_adjusted": test.p_adjusted, "b": test.b, "c": test.c, "pairs_differing": test.pairs_differing,
            "correction": test.correction, "family_size": test.family_size}


def _metric(entry: MetricComparison) -> MetricJson:
    return {"metric": entry.metric, "metric_name": entry.metric_name, "model": entry.model,
            "higher_is_better": entry.higher_is_better, "primary": entry.primary,
            "threshold_a": entry.threshold_a, "threshold_b": entry.threshold_b, "a": _side(entry.a),
            "b": _side(entry.b), "delta": entry.delta, "test": _test(entry.test),
            "flips": {"pass_to_fail": list(entry.flips.pass_to_fail), "fail_to_pass": list(entry.flips.fail_to_pass)},
            "significant": entry.significant, "regression": entry.regression}


def _evaluator(ev: EvaluatorComparison) -> EvaluatorJson:
    return {"label_a": ev.label_a, "label_b": ev.label_b, "evaluator_id": ev.evaluator_id,
            "parameters": ev.parameters, "folder_a": ev.folder_a, "folder_b": ev.folder_b,
            "shared_rows": ev.shared_rows, "rows_only_a": ev.rows_only_a, "rows_only_b": ev.rows_only_b,
            "test_cases_only_a": list(ev.test_cases_only_a), "test_cases_only_b": list(ev.test_cases_only_b),
            "metrics": [_metric(entry) for entry in ev.metrics]}


def _only(ev: OneRunOnly) -> OneRunOnlyJson:
    return {"label": ev.label, "evaluator_id": ev.evaluator_id, "parameters": ev.parameters, "reason": ev.reason}


def _regression(problem: Problem) -> RegressionJson:
    """The problem with its description's HTML twin beside the description, as problems_and_actions.json has it."""
    return {"schema_version": names.PROBLEMS_SCHEMA_VERSION, "description": problem.description,
            "description_html": escape(problem.description), "actions_description": problem.actions,
            "actions_codes": [], "evaluator_id": problem.source.evaluator_id,
            "evaluator_label": problem.source.evaluator_label, "resources": list(problem.resources),
            "severity": problem.severity, "problem_type": problem.problem_type, "problem_attrs": dict(problem.attrs)}


def comparison_json(data: Comparison) -> ComparisonJson:
    """comparison.json (and ``sonar compare --json``): the comparison, its problems in H2O's shape."""
    return {"schema_version": names.COMPARISON_SCHEMA_VERSION, "sonar_version": data.sonar_version,
            "confidence_level": data.confidence_level, "bootstrap_resamples": data.bootstrap_resamples,
            "run_a": {"run_id": data.run_a.run_id, "path": data.run_a.path},
            "run_b": {"run_id": data.run_b.run_id, "path": data.run_b.path},
            "models": list(data.models), "models_only_a": list(data.models_only_a),
            "models_only_b": list(data.models_only_b), "test_cases_shared": data.test_cases_shared,
            "test_cases_only_a": list(data.test_cases_only_a), "test_cases_only_b": list(data.test_cases_only_b),
            "evaluators_only_a": [_only(ev) for ev in data.evaluators_only_a],
            "evaluators_only_b": [_only(ev) for ev in data.evaluators_only_b],
            "evaluators": [_evaluator(ev) for ev in data.evaluators],
            "problems": [_regression(p) for p in data.problems], "regressions": data.regressions,
            "partial": {side: {"status": run.status, "not_finished": dict(run.not_finished)}
                        for side, run in data.partial.items()},
            "not_comparable": list(data.not_comparable)}
