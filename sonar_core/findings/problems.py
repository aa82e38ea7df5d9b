"""Problems the core derives for every evaluator: thresholds, perturbation flips, dataset gaps.

Severity of a threshold problem (RESULT_FORMAT.md's reference rule): for a higher-is-better
metric with threshold t on range [lo, hi], a model mean s < t is HIGH when
s <= lo + (t - lo) / 2 (at or below half the threshold on [0, 1]) and MEDIUM otherwise. For
a lower-is-better metric the rule is mirrored: s > t is HIGH when s >= t + (hi - t) / 2. An
unbounded worse end (a count on [0, inf]) is taken as t + 2 (t - lo) (mirrored for
higher-is-better), so HIGH starts at twice the threshold on [0, inf].
"""

from __future__ import annotations

import math
from typing import Any

from .row_keys import row_keys
from .scored import ScoredEvaluator
from .types import SEVERITIES, SEVERITY_ORDER, Problem, Source  # the severities' home is .types
from ..contract import Metric, MetricRole

__all__ = [
    "SEVERITIES",
    "SEVERITY_ORDER",
    "threshold_severity",
    "threshold_problems",
    "flip_problems",
    "dataset_problems",
    "make_problem",
    "source_of",
]


# AVID taxonomy codes for the problem types Sonar raises.
_AVID = {
    "accuracy": ("P0204", "Accuracy: model performance is below the acceptable level"),
    "robustness": ("P0201", "Resilience/stability: output changes under small input perturbations"),
    "privacy": ("S0301", "Information leak: personal data disclosed"),
    "security": ("S0301", "Information leak: credentials or secrets disclosed"),
    "dataset": ("P0101", "Data issues: the evaluation data is incomplete"),
    "fairness": ("E0100", "Bias/discrimination"),
    "judge": ("P0204", "Accuracy: the evaluation's LLM judge gives unusable or inconsistent verdicts"),
}


def threshold_severity(metric: Metric, score: float, threshold: float) -> str:
    """HIGH or MEDIUM for a score already on the wrong side of ``threshold``."""
    lo, hi = metric.value_range
    # An unbounded worse end (a count on [0, inf]) has no half-way point: HIGH then starts as far
    # beyond the threshold as the better end lies before it (at twice the threshold on [0, inf]).
    if metric.higher_is_better and math.isinf(lo):
        lo = threshold - 2 * (hi - threshold)
    if not metric.higher_is_better and math.isinf(hi):
        hi = threshold + 2 * (threshold - lo)
    # The tolerance keeps a score exactly on the boundary HIGH despite float rounding
    # (0.2 + 0.8 / 2 is 0.6000000000000001).
    eps = 1e-9 * max(1.0, abs(hi - lo))
    if metric.higher_is_better:
        return "HIGH" if score <= lo + (threshold - lo) / 2 + eps else "MEDIUM"
    return "HIGH" if score >= threshold + (hi - threshold) / 2 - eps else "MEDIUM"


def source_of(ev: ScoredEvaluator) -> Source:
    """Who raises ``ev``'s problems and insights."""
    return Source(explainer_id=ev.cls.qualified_name(), explainer_name=ev.cls.display_name, evaluator_id=ev.cls.id,
                  evaluator_label=ev.label or ev.cls.id)


def make_problem(
    ev: ScoredEvaluator,
    *,
    description: str,
    severity: str,
    problem_type: str,
    actions: str,
    attrs: dict[str, Any],
) -> Problem:
    """A problem of ``ev``; its attributes lead with the evaluator's name and the AVID code of its type."""
    code, code_description = _AVID.get(problem_type, ("", ""))
    return Problem(source=source_of(ev), description=description, severity=severity, problem_type=problem_type,
                   actions=actions, attrs={"evaluator_name": ev.cls.display_name, "avid_problem_code": code,
                                           "avid_problem_code_description": code_description, **attrs})


def threshold_problems(ev: ScoredEvaluator) -> list[Problem]:
    """One problem per model and metric whose mean is on the wrong side of its threshold."""
    problems = []
    aggregates = ev.aggregates()
    parse_metric = next((m for m in ev.cls.metrics if m.role is MetricRole.PARSE_FAILURE), None)
    by_model = ev.by_model()
    failing_by_metric: dict[str, dict[str, list]] = {}

    def failing_of(metric) -> dict[str, list]:
        # Only for a metric some model fails: each is a pass over every row.
        if metric.key not in failing_by_metric:
            groups = failing_by_metric[metric.key] = {}
            for pair in ev.failing(metric):
                groups.setdefault(pair[0].model_key, []).append(pair)
        return failing_by_metric[metric.key]

    for model, values in aggregates.items():
        pairs = by_model[model]
        for metric in ev.cls.metrics:
            if not (metric.raises_problems or metric.is_primary):
                continue
            score = values.get(metric.key)
            threshold = ev.thresholds[metric.key]
            if score is None or not metric.fails(score, threshold):
                continue
            side = "below" if metric.higher_is_better else "above"
            description = f"Model {model}: {metric.display_name} is {score:.4f}, {side} the threshold {threshold:g}"
            if metric.model_level:
                # A value of the whole set of rows: no single row is "on the wrong side".
                failing = []
                description += "."
            else:
                failing = failing_of(metric).get(model, [])
                # A row that could not be checked also misses "pass": say how many, so a report does
                # not read a judge's unusable answers as the model's failures.
                unchecked = sum(1 for _, result in failing if result.values.get(parse_metric.key)) \
                    if parse_metric and metric.role is not MetricRole.PARSE_FAILURE else 0
                note = f"; {unchecked} of them could not be checked ({parse_metric.display_name})" if unchecked else ""
                description += f" ({len(failing)} of {len(pairs)} test cases on the wrong side{note})."
            problems.append(
                make_problem(
                    ev,
                    description=description,
                    severity=threshold_severity(metric, score, threshold),
                    problem_type=ev.cls.problem_type,
                    actions=(
                        f"Inspect the failing test cases of {model} in the evaluation results and improve the "
                        f"model, prompt or retrieval where {metric.display_name} is weakest."
                    ),
                    attrs={
                        "model_name": model,
                        "metric_id": metric.key,
                        "metric_name": metric.display_name,
                        "metric_threshold": threshold,
                        "metric_score": score,
                        **row_keys([row for row, _ in failing]),
                    },
                )
            )
    return problems


def flip_problems(ev: ScoredEvaluator) -> list[Problem]:
    """A problem for each perturbed row whose primary metric crossed the threshold.

    Pass -> fail after perturbation is MEDIUM (the model is not robust); fail -> pass is LOW
    (inconsistent, but not a regression).
    """
    metric = ev.primary
    if metric.model_level:
        return []  # one value per model: a single perturbed row cannot flip it
    threshold = ev.thresholds[metric.key]
    perturbed = [(row, result) for row, result in ev.scored if row.original_test_case_key]
    if not perturbed:
        return []  # no perturbed row: no lookup of every row's result to build
    by_case_model = {(row.test_case_key, row.model_key): result for row, result in ev.scored}
    problems = []
    for row, result in perturbed:
        original = by_case_model.get((row.original_test_case_key, row.model_key))
        if original is None:
            continue
        before, after = original.values.get(metric.key), result.values.get(metric.key)
        if before is None or after is None:
            continue
        failed_before, failed_after = metric.fails(before, threshold), metric.fails(after, threshold)
        if failed_before == failed_after:
            continue
        how = row.perturbation or "a perturbation"
        direction = "from passing to failing" if failed_after else "from failing to passing"
        problems.append(
            make_problem(
                ev,
                description=(
                    f"Model {row.model_key}: {metric.display_name} flipped {direction} after {how} of test case "
                    f"{row.original_test_case_key} ({before:.4f} -> {after:.4f}, threshold {threshold:g})."
                ),
                severity="MEDIUM" if failed_after else "LOW",
                problem_type="robustness",
                actions="Make the model robust to this kind of input change (augment prompts, add guardrails).",
                attrs={
                    "model_name": row.model_key,
                    "metric_id": metric.key,
                    "metric_name": metric.display_name,
                    "metric_threshold": threshold,
                    "metric_score": after,
                    "original_metric_score": before,
                    "perturbation": row.perturbation,
                    "original_test_case_key": row.original_test_case_key,
                    **row_keys([row]),
                },
            )
        )
    return problems


def dataset_problems(ev: ScoredEvaluator) -> list[Problem]:
    """HIGH ``dataset`` problems for rows skipped for an empty required value.

    H2O Sonar raises one problem per row; Sonar groups the rows of one model and one missing
    input into one problem listing every row key, so a report reads as a list of causes.
    """
    groups: dict[tuple[str, str], list] = {}
    for skipped in ev.skipped:
        groups.setdefault((skipped.row.model_key, skipped.missing.value), []).append(skipped.row)
    problems = []
    for (model, missing), rows in sorted(groups.items()):
        label = missing.replace("_", " ")
        problems.append(
            make_problem(
                ev,
                description=(
                    f"Model {model}: {len(rows)} row(s) have an empty {label}, which {ev.cls.display_name} needs; "
                    f"they were skipped: {', '.join(r.test_case_key for r in rows[:10])}"
                    + (" ..." if len(rows) > 10 else "")
                ),
                severity="HIGH",
                problem_type="dataset",
                actions=f"Provide the {label} for these rows (for RAG, check why retrieval returned nothing).",
                attrs={
                    "model_name": model,
                    "missing_input": missing,
                    **row_keys(rows),
                },
            )
        )
    return problems
