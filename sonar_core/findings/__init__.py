"""The findings layer: everything a run concludes, computed before anything is written.

Per evaluator, :func:`derive_findings` turns a :class:`ScoredEvaluator` (rows and their metric
values) into :class:`EvaluatorFindings`: leaderboard, problems and insights. Per run,
:mod:`.run_findings` ranks the models over evaluators and counts problems. The findings' types
are in :mod:`.types` (frozen dataclasses, plain text only). The artifact writers
(:mod:`sonar_core.artifacts`) serialise findings and compute nothing.
"""

from .confidence import StatsSettings
from .evaluator import EvaluatorFindings, collect_problems, derive_findings
from .types import EvaluatorSummary, Leaderboard, RunFindings
from .scored import ScoredEvaluator, SkippedRow, mean, model_stats

__all__ = ["EvaluatorFindings", "EvaluatorSummary", "Leaderboard", "RunFindings", "ScoredEvaluator", "SkippedRow", "StatsSettings", "collect_problems", "derive_findings", "mean",
           "model_stats"]
