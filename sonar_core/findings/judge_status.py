"""How far one judge evaluator's judge is believed (:class:`JudgeTrust`), as plain values.

The findings' data (:mod:`.judge_trust` decides it from a calibration and raises its problem);
here only the values and the sentences that say them, so that the leaderboard (:class:`~.types.Board`)
can hold it and the writers read it without importing anything that computes
(tests/core/test_findings_types.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TypedDict

from .wording import kappa_bar

__all__ = ["JudgeTrust", "TRUSTED", "UNTRUSTED", "UNCALIBRATED", "NOT_SCORED"]

TRUSTED, UNTRUSTED, UNCALIBRATED = "trusted", "untrusted", "uncalibrated"
#: The ``details`` key of a row not scored because its evaluator's judge is untrusted (value: the reason).
NOT_SCORED = "not_scored"


class MeasuredJson(TypedDict, total=False):
    """What :meth:`JudgeTrust.measured` reads of a calibration result (``CalibrationResult.as_dict()``)."""

    judge: str
    items: int
    set_items: int | None
    accuracy: float
    kappa: float
    unreadable: int
    recall: dict[str, float | None]


class JudgeTrustJson(TypedDict):
    """A judge's trust as the leaderboard, the row results, the generation report and run.json write it
    (:meth:`JudgeTrust.as_dict`): its fields and its summary line."""

    status: str
    judge: str | None
    reason: str
    items: int | None
    set_items: int | None
    accuracy: float | None
    kappa: float | None
    min_kappa: float | None
    unreadable: int | None
    recall: dict[str, float | None] | None
    scored: bool
    summary: str


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
    def measured(cls, calibration: MeasuredJson, min_kappa: float) -> "JudgeTrust":
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

    def as_dict(self) -> JudgeTrustJson:
        return {**asdict(self), "summary": self.summary()}
