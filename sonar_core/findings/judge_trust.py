"""Judge trust: whether a judge evaluator's verdicts count, from the judge's calibration.

Before scoring, the run measures each judge on its evaluator's labelled calibration set
(:mod:`sonar_core.execution.calibration`). Here that measurement becomes a :class:`JudgeTrust`:

* **trusted** when Cohen's kappa reaches the evaluator's ``min_judge_kappa``: the verdicts count
  as usual and every report shows the calibration figures beside them;
* **untrusted** below it: by default the evaluator's rows are not scored at all (nothing is asked of
  the judge; each row is written as not scored, with :meth:`JudgeTrust.not_scored_reason`); with
  ``score_untrusted`` they are scored and written, marked untrusted. Either way the evaluator
  raises exactly one HIGH ``judge`` problem (:func:`calibration_problem`) instead of any
  threshold, flip or reliability problem about the models, gives no best/worst-model or hardest
  test-case insight, and its leaderboard ranks no model;
* **uncalibrated** when the run did not measure it (``--no-calibrate``, or no calibration set):
  the verdicts count, and the reports say the judge is uncalibrated.
"""

from __future__ import annotations

from typing import Any

from ..judge_evaluator import MIN_JUDGE_KAPPA
from .judge_status import NOT_SCORED, TRUSTED, UNCALIBRATED, UNTRUSTED, JudgeTrust
from .problems import make_problem
from .types import Problem
from .scored import ScoredEvaluator
from .wording import kappa_bar

__all__ = ["JudgeTrust", "TRUSTED", "UNTRUSTED", "UNCALIBRATED", "NOT_SCORED", "calibration_problem", "kappa_bar",
           "not_scored", "trust_bar"]

def trust_bar(cls: type, params: dict[str, Any] | None = None) -> float:
    """The least kappa at which judge evaluator ``cls``'s judge is trusted: its ``min_judge_kappa``
    (the given parameters, validated, else the default 0.4)."""
    return float(cls.validate_params(params or {}).get(MIN_JUDGE_KAPPA, 0.4))


def not_scored(trust: JudgeTrust | None) -> bool:
    """Whether an evaluator with this trust is not scored (its judge untrusted, no ``score_untrusted``)."""
    return trust is not None and not trust.scored


def calibration_problem(ev: ScoredEvaluator, trust: JudgeTrust) -> Problem:
    """The one HIGH ``judge`` problem of an evaluator whose judge failed its calibration."""
    outcome = ("its rows were not scored" if not trust.scored else "its verdicts are not counted")
    return make_problem(
        ev,
        description=(f"Judge {trust.judge} failed calibration for {ev.cls.display_name}: kappa {trust.kappa:.2f}, "
                     f"accuracy {trust.accuracy:.0%} on {trust.items} items; {outcome}."),
        severity="HIGH",
        problem_type="judge",
        actions=("Use a stronger judge (an OpenAI-compatible endpoint or a larger local model: docs/judges.md), "
                 "check it with `sonar judges calibrate`, then run again."
                 + ("" if trust.scored else " To see this judge's verdicts anyway (not counted), set "
                    "score_untrusted: true or pass --score-untrusted.")),
        attrs={"judge": trust.judge, "kappa": trust.kappa, "accuracy": trust.accuracy, "items": trust.items,
               "min_judge_kappa": trust.min_kappa, "scored": trust.scored},
    )
