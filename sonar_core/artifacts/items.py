"""Problems and insights in H2O Sonar's JSON shape (problems_and_actions.json, insights_and_actions.json).

The findings hold them as plain text (:class:`~sonar_core.findings.types.Problem`,
:class:`~sonar_core.findings.types.Insight`); the HTML twin of the description, the explanation
type, the schema version and the empty ``actions_codes`` and ``resources`` are the format's, added here.
"""

from __future__ import annotations

import html

from .. import names
from ..findings.types import Insight, Problem, Source
from .record_shapes import InsightJson, ItemJson, ProblemJson

__all__ = ["insight_json", "problem_json"]


def _base(source: Source, description: str, actions: str, schema_version: str,
          resources: tuple[str, ...] = ()) -> ItemJson:
    """The keys a problem and an insight share, in the files' order."""
    return {
        "schema_version": schema_version,
        "description": description,
        "description_html": html.escape(description),
        "actions_description": actions,
        "actions_codes": [],
        "explainer_id": source.explainer_id,
        "explainer_name": source.explainer_name,
        "evaluator_id": source.evaluator_id,
        "evaluator_label": source.evaluator_label,
        "explanation_type": "global-html-fragment",
        "resources": list(resources),
    }


def problem_json(problem: Problem) -> ProblemJson:
    """One item of problems_and_actions.json."""
    return {**_base(problem.source, problem.description, problem.actions, names.PROBLEMS_SCHEMA_VERSION,
                    problem.resources),
            "severity": problem.severity, "problem_type": problem.problem_type, "problem_attrs": dict(problem.attrs)}


def insight_json(insight: Insight) -> InsightJson:
    """One item of insights_and_actions.json."""
    return {**_base(insight.source, insight.description, insight.actions, names.INSIGHTS_SCHEMA_VERSION),
            "insight_type": insight.insight_type, "insight_attrs": dict(insight.attrs)}
