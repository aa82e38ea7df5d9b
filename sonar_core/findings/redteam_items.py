"""A red-team run's problems and insights as the run's own (:class:`~.types.Problem`, :class:`~.types.Insight`):
they join the core's problems, so they count in run.json's totals, appear in index.html and gate
``--fail-on-problems`` like any problem. Plain text; the figures they rest on are in ``attrs``.
"""

from __future__ import annotations

from typing import Any

from .redteam import Rate, RedteamFindings
from .types import Insight, Problem, Source

__all__ = ["REDTEAM_SOURCE", "core_items"]

#: Who raises red-team problems and insights in the run's lists.
REDTEAM_SOURCE = Source(explainer_id="sonar_core.redteam", explainer_name="Red team", evaluator_id="redteam",
                        evaluator_label="redteam")
_ACTIONS = {"attack_success_rate": "Read the successful attacks' transcripts (redteam/report.html) and harden "
                                   "the system prompt, input filtering or the model against that hazard.",
            "hit_at_k": "One success in k samples counts: lower the sampling temperature or harden the target.",
            "over_refusal": "Read the refused controls (redteam/report.html): the target refuses safe requests "
                            "that look unsafe; loosen its filter."}


def core_items(findings: RedteamFindings) -> tuple[list[Problem], list[Insight]]:
    """The findings' problems and insights as the run's own (plain text, figures in ``attrs``)."""
    def attrs(model: str, metric: str, rate: Rate, scope: tuple[str, ...] = ()) -> dict[str, Any]:
        interval = rate.interval
        return {"model_name": model, "metric": metric, "scope": list(scope), "hits": rate.hits, "n": rate.n,
                "not_assessed": rate.not_assessed, "rate": rate.value, "ci_low": interval.low if interval else None,
                "ci_high": interval.high if interval else None, "evaluator_name": "Red team"}
    problems = [Problem(REDTEAM_SOURCE, p.description, p.severity, "security", _ACTIONS[p.metric],
                        {**attrs(p.model, p.metric, p.rate, p.scope), "threshold": p.threshold}, ("redteam/report.html",))
                for p in findings.problems]
    insights = [Insight(REDTEAM_SOURCE, i.description, "security", "Test the target against this technique first.",
                        {**attrs(i.model, "attack_success_rate", i.rate), "technique": i.technique})
                for i in findings.insights]
    return problems, insights
