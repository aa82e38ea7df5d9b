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

from dataclasses import asdict, dataclass, replace
from typing import Any

from ..judge_evaluator import MIN_JUDGE_KAPPA
from .problems import make_problem
from .types import Problem
from .scored import ScoredEvaluator
from .wording import kappa_bar

__all__ = ["JudgeTrust", "TRUSTED", "UNTRUSTED", "UNCALIBRATED", "NOT_SCORED", "calibration_problem", "kappa_bar",
           "not_scored", "trust_bar"]

TRUSTED, UNTRUSTED, UNCALIBRATED = "trusted", "untrusted", "uncalibrated"
#: The ``details`` key of a row not scored because its evaluator's judge is untrusted (value: the reason).
NOT_SCORED = "not_scored"


@dataclass(frozen=True)
class JudgeTrust:
    """How far to believe one evaluator's judge (written into the leaderboard and run.json)."""

    status: str
    judge: str | None = None
    #: Why the judge is uncalibrated; empty otherwise.
    reason: str = ""
    items: int | None = None
    set_items: int | None = None
    accuracy: float | None = None
    kappa: float | None = None
    min_kappa: float | None = None
    unreadable: int | None = None
    recall: dict[str, float | None] | None = None
    #: Whether the evaluator's rows were scored: False for an untrusted judge unless the run (or the
    #: evaluator's entry) sets ``score_untrusted``; always True for a trusted or uncalibrated judge.
    scored: bool = True

    @property
    def counts(self) -> bool:
        """Whether the verdicts count (trusted or uncalibrated)."""
        return self.status != UNTRUSTED

    def gated(self, score_untrusted: bool) -> "JudgeTrust":
        """This trust with ``scored`` decided: an untrusted judge scores only with ``score_untrusted``."""
        return replace(self, scored=self.status != UNTRUSTED or score_untrusted)

    def not_scored_reason(self) -> str:
        """Why an untrusted judge's rows are not scored, e.g. ``not scored: judge local-smollm2 is
        untrusted (κ = 0.00, needs κ ≥ 0.40)``."""
        return f"not scored: judge {self.judge} is untrusted ({kappa_bar(self.kappa, self.min_kappa)})"

    @classmethod
    def measured(cls, calibration: dict[str, Any], min_kappa: float) -> "JudgeTrust":
        """Trusted or untrusted from a calibration result (``CalibrationResult.as_dict()``)."""
        kappa = calibration["kappa"]
        return cls(status=TRUSTED if kappa >= min_kappa else UNTRUSTED, judge=calibration["judge"],
                   items=calibration["items"], set_items=calibration.get("set_items") or calibration["items"],
                   accuracy=calibration["accuracy"], kappa=kappa, min_kappa=min_kappa,
                   unreadable=calibration.get("unreadable"), recall=calibration.get("recall"))

    @classmethod
    def uncalibrated(cls, judge: str | None, reason: str) -> "JudgeTrust":
        return cls(status=UNCALIBRATED, judge=judge, reason=reason)

    def summary(self) -> str:
        """One line for reports: the judge, its figures, and what they mean for the verdicts."""
        if self.status == UNCALIBRATED:
            return f"Judge {self.judge}: uncalibrated ({self.reason}); its verdicts are not measured against labels."
        subset = f" (a balanced subset of {self.set_items})" if self.set_items and self.set_items != self.items else ""
        figures = (f"kappa {self.kappa:.2f}, accuracy {self.accuracy:.0%} on {self.items} labelled items{subset}; "
                   f"trusted at kappa {self.min_kappa:g} or more")
        if self.status == TRUSTED:
            return f"Judge {self.judge}: calibrated, {figures}."
        if not self.scored:
            return (f"Judge {self.judge} is untrusted: {figures}. Its rows were not scored "
                    "(score_untrusted: true scores them anyway, not counted).")
        return f"Judge {self.judge} is untrusted: {figures}. Its verdicts are written but not counted."

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "summary": self.summary()}


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
