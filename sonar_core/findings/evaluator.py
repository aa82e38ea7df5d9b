"""One evaluator's findings: everything the core concludes from its scored rows.

:func:`derive_findings` computes the leaderboard, the problems (thresholds, perturbation flips,
dataset gaps, judge reliability, then the evaluator's own) and the insights (the standard ones,
then the evaluator's own) into one :class:`EvaluatorFindings`, before anything is written: the
artifact writers only serialise it. New conclusions (intervals, significance, grades) are new
fields here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .insights import evaluator_insights, standard_insights
from .judge_reliability import judge_reliability_problems
from .leaderboards import build_leaderboard
from .problems import SEVERITY_ORDER, dataset_problems, flip_problems, make_problem, threshold_problems
from .scored import ScoredEvaluator

__all__ = ["EvaluatorFindings", "derive_findings", "collect_problems"]


@dataclass(frozen=True)
class EvaluatorFindings:
    """What the core concluded about one evaluator's rows.

    Attributes:
        scored: the evaluator's rows and results, its parameters and thresholds.
        leaderboard: models ranked by the primary metric, with per-model rows and metric meta
            (:func:`~sonar_core.findings.leaderboards.build_leaderboard`).
        problems: every problem, most severe first (problems_and_actions.json's items).
        insights: every insight, the standard ones first (insights_and_actions.json's items).
    """

    scored: ScoredEvaluator
    leaderboard: dict[str, Any]
    problems: list[dict[str, Any]]
    insights: list[dict[str, Any]]


def collect_problems(ev: ScoredEvaluator) -> list[dict[str, Any]]:
    """Threshold, flip, dataset and judge-reliability problems, then the evaluator's own."""
    problems = threshold_problems(ev) + flip_problems(ev) + dataset_problems(ev) + judge_reliability_problems(ev)
    for extra in ev.extra_problems:
        severity = extra.get("severity", "MEDIUM")
        if severity not in SEVERITY_ORDER or not extra.get("description"):
            # A plugin bug: fail this evaluator (recorded in its folder) rather than write a bad file.
            raise ValueError(f"{ev.cls.id}.extra_problems() returned a problem without a description or with "
                             f"severity {severity!r} (use one of {', '.join(SEVERITY_ORDER)})")
        attrs = dict(extra.get("problem_attrs", {}))
        problems.append(make_problem(
            ev,
            description=extra["description"],
            severity=severity,
            problem_type=extra.get("problem_type", ev.cls.problem_type),
            actions=extra.get("actions_description", ""),
            attrs=attrs,
        ))
    return sorted(problems, key=lambda p: SEVERITY_ORDER.get(p["severity"], len(SEVERITY_ORDER)))


def derive_findings(ev: ScoredEvaluator) -> EvaluatorFindings:
    """The findings of ``ev``, computed once; writers read them and compute nothing."""
    return EvaluatorFindings(scored=ev, leaderboard=build_leaderboard(ev), problems=collect_problems(ev),
                             insights=standard_insights(ev) + evaluator_insights(ev))
