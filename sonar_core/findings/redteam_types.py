"""The values a red-team run concludes (:mod:`.redteam` computes them): outcomes, rates with their intervals,
heat maps, problems, insights, detector quality and the leaderboard, as frozen dataclasses and plain text.
Data only, so the writers (``artifacts/redteam.py``, ``artifacts/redteam_report.py``) import nothing that
computes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from .grades import Graded
    from .statistics import Interval

__all__ = ["SUCCESS", "RESISTED", "NOT_ASSESSED", "REFUSED", "ANSWERED", "DIRECT", "AttackOutcome", "Rate",
           "HeatMap", "RedteamProblem", "RedteamInsight", "DetectorQuality", "RankedModel", "RedteamFindings"]

SUCCESS, RESISTED, NOT_ASSESSED = "success", "resisted", "not_assessed"
REFUSED, ANSWERED = "refused", "answered"
_ATTACK_OUTCOMES = (SUCCESS, RESISTED, NOT_ASSESSED)
_CONTROL_OUTCOMES = (REFUSED, ANSWERED, NOT_ASSESSED)
#: The technique label of a base attack sent as it is.
DIRECT = "direct"


@dataclass(frozen=True)
class AttackOutcome:
    """One answer to one test case (an attack under a technique chain, or a benign control), judged.

    ``test_case``: the attack x technique (the test case key); ``attack_id``: the base attack.
    """

    model: str
    test_case: str
    attack_id: str
    hazard: str
    technique: str
    category: str
    outcome: str
    epoch: int = 0
    control: bool = False
    reason: str = ""
    #: The evaluator id of the detector that decided it (the heat map shows its measured figures).
    detector: str = ""

    def __post_init__(self) -> None:
        allowed = _CONTROL_OUTCOMES if self.control else _ATTACK_OUTCOMES
        if self.outcome not in allowed:
            kind = "a benign control" if self.control else "an attack"
            raise ValueError(f"outcome {self.outcome!r} of {kind} must be one of {', '.join(allowed)}")


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``n`` assessed, with ``not_assessed`` left out, and the exact interval of hits / n."""

    hits: int
    n: int
    not_assessed: int = 0
    interval: Interval | None = None

    @property
    def value(self) -> float | None:
        return self.hits / self.n if self.n else None

    def text(self, unit: str = "attacks") -> str:
        """``3 of 40 attacks, 7.5% [1.6%, 20.4%]; 2 not assessed``."""
        if not self.n:
            head = f"no assessed {unit}"
        else:
            head = f"{self.hits} of {self.n} {unit}, {self.value:.1%}"
            if self.interval is not None:
                head += f" [{self.interval.low:.1%}, {self.interval.high:.1%}]"
        return head + (f"; {self.not_assessed} not assessed" if self.not_assessed else "")


@dataclass(frozen=True)
class HeatMap:
    """One model's attack success rate per hazard (rows) x technique (columns); a missing cell had no attack."""

    model: str
    hazards: tuple[str, ...]
    techniques: tuple[str, ...]
    cells: Mapping[tuple[str, str], Rate] = field(default_factory=dict)


@dataclass(frozen=True)
class RedteamProblem:
    """A rate whose whole interval lies above its threshold; plain text."""

    severity: str
    description: str
    model: str
    metric: str
    scope: tuple[str, ...]
    rate: Rate
    threshold: float


@dataclass(frozen=True)
class RedteamInsight:
    """Something a reader should know that is not a problem (the most effective technique)."""

    description: str
    model: str
    technique: str
    rate: Rate


@dataclass(frozen=True)
class DetectorQuality:
    """A detector against labelled answers: confusion counts, precision and recall with intervals."""

    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    not_assessed: int
    precision: Rate
    recall: Rate

    @property
    def items(self) -> int:
        return self.true_positives + self.false_positives + self.false_negatives + self.true_negatives + self.not_assessed

    def trusted(self, bar: float) -> bool:
        """Whether precision and recall both reach ``bar`` (a detector below it is reported untrusted)."""
        return all(r.value is not None and r.value >= bar for r in (self.precision, self.recall))

    def text(self) -> str:
        return (f"precision {self.precision.text('flagged answers')}; recall {self.recall.text('true hits')}"
                + (f"; {self.not_assessed} of {self.items} not assessed" if self.not_assessed else ""))


@dataclass(frozen=True)
class RedteamFindings:
    """Everything :func:`redteam_findings` concludes, per model (keys are model keys)."""

    models: tuple[str, ...]
    success: Mapping[str, Rate]
    hit_at_k: Mapping[str, Rate]
    k: int
    over_refusal: Mapping[str, Rate]
    heat_maps: Mapping[str, HeatMap]
    problems: tuple[RedteamProblem, ...]
    insights: tuple[RedteamInsight, ...]
    threshold: float
    over_refusal_threshold: float
    #: model -> its hazard x technique over-refusal rates on the benign controls.
    refusal_maps: Mapping[str, HeatMap] = field(default_factory=dict)
    ranking: tuple["RankedModel", ...] = ()
    #: model -> hazard -> its grade; empty without reference scores (a standards file).
    grades: Mapping[str, Mapping[str, Graded]] = field(default_factory=dict)
    #: hazard -> the detectors that decided its attacks, in the order first seen.
    detectors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Every successful attack and every refused benign control, by model, hazard, test case and epoch.
    successes: tuple[AttackOutcome, ...] = ()
    over_refused: tuple[AttackOutcome, ...] = ()


@dataclass(frozen=True)
class RankedModel:
    """One model on the red-team leaderboard: rank 1 has the lowest attack success rate (None: nothing
    assessed, ranked last, no rank)."""

    model: str
    rank: int | None
    success: Rate
    over_refusal: Rate | None
