"""The run's judge calibration: every judge a run uses is measured before it scores anything.

For each judge evaluator the run will score, the judge it names is run over the evaluator's
labelled calibration set (:func:`sonar_core.llm.calibration.calibrate`; cached by judge, prompt and
set, so a second run asks nothing). The figures become the evaluator's
:class:`~sonar_core.findings.judge_trust.JudgeTrust`, which decides whether its verdicts count and
whether its rows are scored at all (an untrusted judge's are not, unless ``score_untrusted``), are
journalled (``judge calibrated``) and go into run.json's ``judge_calibration``.

A dry run answers the calibration items with placeholders, so a judge measured afresh there has no
real figures: its evaluator is scored (its calls counted) and listed as *conditional*, its scoring
calls made only if the judge passes (:func:`dry_run_outcomes`). A judge whose calibration is cached
is known, and an untrusted one's scoring calls are left out of the estimate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from ..config import RunConfig
from ..errors import ConfigError
from ..findings.judge_trust import JudgeTrust
from ..journal import Journal
from ..judge_evaluator import MIN_JUDGE_KAPPA
from ..llm.calibration import cache_for, calibrate, calibration_set_path, load_evaluator_set
from .state import Job, RunState

__all__ = ["calibrate_judges", "check_calibration_sets", "calibration_set_of", "dry_run_outcomes",
           "score_untrusted_of"]

_OFF = "calibration turned off (calibrate: false, --no-calibrate)"


def calibration_set_of(job: Job, base_dir: str | None) -> Path | None:
    """The job's calibration set (a user's set, e.g. BYOP's ``calibration_set``, relative to the
    configuration's folder), or None when its evaluator has none."""
    if not getattr(job.cls, "calibration_labels", None):
        return None  # not a labelled judge (the RAGAS family): nothing to calibrate on
    path = calibration_set_path(job.cls, job.params)
    if path is not None and not path.is_absolute() and base_dir:
        path = Path(base_dir) / path
    return path


def score_untrusted_of(job: Job, config: RunConfig) -> bool:
    """Whether ``job`` is scored when its judge is untrusted: its entry's ``score_untrusted``, else the run's."""
    return config.score_untrusted if job.spec.score_untrusted is None else job.spec.score_untrusted


def check_calibration_sets(jobs: list[Job], config: RunConfig) -> None:
    """Before the run starts: ``score_untrusted`` only on a judge evaluator's entry, and (when the run
    calibrates) every set read now, so a faulty one stops the run (a one-line ConfigError naming the
    evaluator, the file, the line and the field)."""
    for job in jobs:
        if job.spec.score_untrusted is not None and not job.cls.requires_judge:
            raise ConfigError(f"evaluator '{job.label}': score_untrusted: {job.cls.id} asks no judge "
                              "(the setting is for judge evaluators)")
    if not config.calibrate:
        return
    base_dir = config.base_dir
    for job in jobs:
        if not job.cls.requires_judge:
            continue
        path = calibration_set_of(job, base_dir)
        if path is None:
            continue
        if not path.is_file():
            raise ConfigError(f"evaluator '{job.label}': calibration set {path}: no such file")
        try:
            load_evaluator_set(job.cls, path)
        except ConfigError as exc:
            raise ConfigError(f"evaluator '{job.label}': {exc}") from None


def calibrate_judges(state: RunState, journal: Journal) -> None:
    """Each runnable judge job's trust, into ``state.judge_trust`` and ``state.judge_calibration``."""
    config, llm = state.config, state.services.llm
    cache = cache_for(llm) if config.calibrate else None
    dry = bool(getattr(state.ledger, "dry", False))
    for job in state.jobs:
        if not job.cls.requires_judge or job.label in state.incompatible:
            continue
        judge = llm.judge_key(job.cls.judge_key(job.params))
        path = calibration_set_of(job, config.base_dir)
        if not config.calibrate or path is None:
            reason = _OFF if not config.calibrate else "its evaluator has no calibration set" + (
                f" (give one with the parameter {job.cls.calibration_param})"
                if getattr(job.cls, "calibration_param", None) else "")
            trust = JudgeTrust.uncalibrated(judge, reason)
            journal.event("judge uncalibrated", "Calibration", "calibrate_judges", evaluator=job.label,
                          judge=judge, reason=reason)
            state.judge_trust[job.label] = trust
            state.judge_calibration[job.label] = {**trust.as_dict(), "calibration": None}
            continue
        result = calibrate(job.cls, job.params, llm, judge, cache=cache, set_path=path,
                           max_items=config.calibration_items)
        trust = JudgeTrust.measured(result.as_dict(), float(job.params.get(MIN_JUDGE_KAPPA, 0.4)))
        # A dry run's fresh measurement is of placeholder answers: whether the judge passes is not known, so
        # its evaluator is scored (its calls counted) and the estimate says they depend on the calibration.
        unknown = dry and not result.cached
        trust = trust.gated(score_untrusted_of(job, config) or unknown)
        journal.event("judge calibrated", "Calibration", "calibrate_judges", evaluator=job.label, judge=judge,
                      status=trust.status, items=result.items, set_items=result.set_items,
                      accuracy=result.accuracy, kappa=result.kappa, min_judge_kappa=trust.min_kappa,
                      scored=trust.scored, cached=result.cached, seconds=result.seconds)
        state.judge_trust[job.label] = trust
        state.judge_calibration[job.label] = {**trust.as_dict(), "calibration": result.as_dict(),
                                              **({"outcome_unknown": True} if unknown else {})}


class ConditionalGate(TypedDict):
    """An evaluator whose scoring calls, counted in a dry run's estimate, are made only if its judge passes."""
    evaluator: str
    judge: str
    min_kappa: float
    calls: int


class NotScored(TypedDict):
    """An evaluator whose judge a cached calibration already found untrusted."""
    evaluator: str
    reason: str


class JudgeGates(TypedDict):
    """What a dry run's estimate says about judge gating (:func:`dry_run_outcomes`)."""
    conditional: list[ConditionalGate]
    not_scored: list[NotScored]


def dry_run_outcomes(state: RunState) -> JudgeGates:
    """What a dry run's estimate says about judge gating: ``conditional`` (evaluators whose judge was
    measured on placeholders: ``evaluator``, ``judge``, ``min_kappa`` and ``calls``, the scoring calls counted
    in the estimate that are made only if the judge passes) and ``not_scored`` (evaluators whose judge's
    cached calibration is untrusted: ``evaluator`` and ``reason``; their scoring calls are not counted)."""
    conditional: list[ConditionalGate] = []
    not_scored: list[NotScored] = []
    tallies = getattr(state.ledger, "evaluators", {}) or {}
    for label, entry in state.judge_calibration.items():
        trust = state.judge_trust[label]
        if entry.get("outcome_unknown") and not score_untrusted_of(_job(state, label), state.config):
            tally = tallies.get(label)
            conditional.append({"evaluator": label, "judge": trust.judge, "min_kappa": trust.min_kappa,
                                "calls": tally.calls if tally is not None else 0})
        elif not trust.scored:
            not_scored.append({"evaluator": label, "reason": trust.not_scored_reason()})
    return {"conditional": conditional, "not_scored": not_scored}


def _job(state: RunState, label: str) -> Job:
    return next(job for job in state.jobs if job.label == label)
