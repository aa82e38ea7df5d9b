"""The JSON shapes an evaluator and the core hand each other: a metric's ``metrics_meta`` entry, a row's
sentence-level ``actual_output_meta`` (RESULT_FORMAT.md), and the problems and insights an evaluator
raises itself. ``TypedDict`` s: at run time they are the plain dicts they always were, so a plugin that
builds them as dict literals keeps working. Re-exported by :mod:`sonar_core.contract` and ``sonar_core``.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from .jsontypes import JsonObject

__all__ = ["MetricMeta", "SentenceScore", "OutputMeta", "ExtraProblem", "ExtraInsight"]


class MetricMeta(TypedDict):
    """A metric's ``metrics_meta`` entry (H2O Sonar's shape), with the threshold in force."""
    key: str
    display_name: str
    data_type: str
    display_value: str
    description: str
    value_range: list[float | None]
    higher_is_better: bool
    threshold: float | None
    is_primary_metric: bool
    parent_metric: str
    exclude: bool
    role: str | None
    model_level: bool


class SentenceScore(TypedDict):
    """One sentence of an answer with its metric values (RESULT_FORMAT.md's ``actual_output_meta``)."""
    text: str
    metrics: dict[str, float | None]
    meta: JsonObject


class OutputMeta(TypedDict):
    """One entry of a row's ``actual_output_meta``: how the answer was split, and its sentences."""
    tokenization: str
    data: list[SentenceScore]


class ExtraProblem(TypedDict):
    """A problem an evaluator raises itself (:meth:`Evaluator.extra_problems`); the core adds the rest."""
    description: str
    severity: NotRequired[str]  #: HIGH, MEDIUM (the default) or LOW
    problem_type: NotRequired[str]  #: the evaluator's ``problem_type`` when absent
    actions_description: NotRequired[str]
    problem_attrs: NotRequired[JsonObject]


class ExtraInsight(TypedDict):
    """An insight an evaluator adds itself (:meth:`Evaluator.extra_insights`); the core adds the rest."""
    insight_type: str
    description: str
    actions_description: NotRequired[str]
    insight_attrs: NotRequired[JsonObject]

