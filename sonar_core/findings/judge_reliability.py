"""The "judge unreliable" problem: a judge whose answers cannot be read, or do not agree with themselves.

For every evaluator with a judge (``requires_judge``), per model:

* the share of rows that are parse failures (the metric with role PARSE_FAILURE) above that
  metric's threshold in force, or
* the mean judge agreement (metric ``judge_agreement``, measured when rows are judged more than
  once) below that metric's threshold in force

raises one problem of type ``judge`` naming the judge, both figures and their thresholds. It is
HIGH when the judge is no better than a coin (agreement at or below 0.5) or at least half of the
rows have no usable answer, MEDIUM otherwise. Those two metrics raise no threshold problems of
their own: this one says what they mean.
"""

from __future__ import annotations

from .scored import ScoredEvaluator
from ..contract import MetricRole
from ..judge_evaluator import JUDGE_AGREEMENT
from .problems import make_problem
from .row_keys import row_keys
from .types import Problem

__all__ = ["judge_reliability_problems"]


def _judge_of(ev: ScoredEvaluator, model: str) -> str:
    for row, result in ev.scored:
        if row.model_key == model and result.details.get("judge"):
            return str(result.details["judge"])
    return "(unknown)"


def judge_reliability_problems(ev: ScoredEvaluator) -> list[Problem]:
    if not ev.cls.requires_judge:
        return []
    parse_metric = next((m for m in ev.cls.metrics if m.role is MetricRole.PARSE_FAILURE), None)
    agreement_metric = next((m for m in ev.cls.metrics if m.key == JUDGE_AGREEMENT), None)
    problems = []
    for model, values in ev.aggregates().items():
        reasons, high = [], False
        parse_rate = values.get(parse_metric.key) if parse_metric else None
        agreement = values.get(agreement_metric.key) if agreement_metric else None
        parse_limit = ev.thresholds.get(parse_metric.key) if parse_metric else None
        agreement_limit = ev.thresholds.get(agreement_metric.key) if agreement_metric else None
        if parse_rate is not None and parse_metric.fails(parse_rate, parse_limit):
            reasons.append(f"no usable answer for {parse_rate:.0%} of rows (limit {parse_limit:.0%})")
            high = high or parse_rate >= 0.5
        if agreement is not None and agreement_metric.fails(agreement, agreement_limit):
            reasons.append(f"repeated judgements agree only {agreement:.0%} of the time (minimum {agreement_limit:.0%})")
            high = high or agreement <= 0.5
        if not reasons:
            continue
        judge = _judge_of(ev, model)
        unparsed = [row for row, result in ev.scored
                    if row.model_key == model and parse_metric and result.values.get(parse_metric.key)]
        problems.append(make_problem(
            ev,
            description=f"Judge {judge} is unreliable on model {model}'s answers: " + "; ".join(reasons) + ".",
            severity="HIGH" if high else "MEDIUM",
            problem_type="judge",
            actions=("Point the evaluator at a stronger judge (custom_eval_judge_config_key), check the raw answers "
                     "in the rows' judge_answers, or ask more than once (judge_repeats) and read the agreement."),
            attrs={
                "model_name": model,
                "judge": judge,
                "judge_repeats": ev.params.get("judge_repeats"),
                "parse_failure_rate": parse_rate,
                "parse_failure_threshold": parse_limit,
                "agreement_rate": agreement,
                "agreement_threshold": agreement_limit,
                "metric_id": parse_metric.key if parse_metric else None,
                **row_keys(unparsed),
            },
        ))
    return problems
