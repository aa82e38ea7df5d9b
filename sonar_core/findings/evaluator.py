"""One evaluator's findings: everything the core concludes from its scored rows.

:func:`derive_findings` computes the leaderboard, the problems (thresholds, perturbation flips,
dataset gaps, judge reliability, then the evaluator's own) and the insights (the standard ones,
then the evaluator's own) into one :class:`EvaluatorFindings`, before anything is written: the
artifact writers only serialise it. New conclusions (intervals, significance, grades) are new
fields here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .case_rows import case_rows
from .conclusions import typed_leaderboard, weakest_rows
from .confidence import StatsSettings, annotate_board, lead_insight
from .epochs import reduce_epochs
from .fallbacks import fallback_notes, fallback_problems
from .insights import evaluator_insights, standard_insights
from .judge_reliability import judge_reliability_problems
from .judge_trust import JudgeTrust, calibration_problem
from .leaderboards import build_leaderboard
from .problems import SEVERITY_ORDER, dataset_problems, flip_problems, make_problem, threshold_problems
from .row_keys import cap_row_keys
from .scored import ScoredEvaluator
from .types import Board, CaseRows, Insight, Leaderboard, Problem, WeakRow

__all__ = ["EvaluatorFindings", "derive_findings", "collect_problems"]


@dataclass(frozen=True)
class EvaluatorFindings:
    """What the core concluded about one evaluator's rows.

    Attributes:
        scored: the evaluator's rows and results, its parameters and thresholds.
        board: models ranked by the primary metric, each on every metric, as the leaderboard files
            hold them (:func:`~sonar_core.findings.leaderboards.build_leaderboard`).
        problems: every problem, most severe first (problems_and_actions.json's items, once written).
        insights: every insight, the standard ones first (insights_and_actions.json's items, once written).
        judge_trust: for a judge evaluator, how far its judge is to be believed (None otherwise).
        fallbacks: what rows scored by a fallback model did not measure, one sentence per fallback
            (:mod:`.fallbacks`); empty when every row was scored as the catalogue says.
        leaderboard: what the reports tell about the models: each one's primary value, interval,
            n, rank and passing rows, which metrics its means fail, and the leader (:mod:`.conclusions`).
        weakest: the rows "Weakest answers" lists, furthest on the wrong side first (none for an
            untrusted judge).
        cases: the rows the drill-down shows, with their values and messages (:mod:`.case_rows`).
    """

    scored: ScoredEvaluator
    board: Board
    problems: list[Problem]
    insights: list[Insight]
    leaderboard: Leaderboard
    weakest: tuple[WeakRow, ...] = ()
    cases: CaseRows = CaseRows(test_cases=0, rows=(), skipped=(), turns={})
    judge_trust: JudgeTrust | None = None
    fallbacks: tuple[str, ...] = ()


def collect_problems(ev: ScoredEvaluator) -> list[Problem]:
    """Threshold, flip, dataset and judge-reliability problems, then the evaluator's own."""
    problems = (threshold_problems(ev) + flip_problems(ev) + dataset_problems(ev) + judge_reliability_problems(ev)
                + fallback_problems(ev))
    for extra in ev.extra_problems:
        severity = extra.get("severity", "MEDIUM")
        if severity not in SEVERITY_ORDER or not extra.get("description"):
            # A plugin bug: fail this evaluator (recorded in its folder) rather than write a bad file.
            raise ValueError(f"{ev.cls.id}.extra_problems() returned a problem without a description or with "
                             f"severity {severity!r} (use one of {', '.join(SEVERITY_ORDER)})")
        attrs = cap_row_keys(dict(extra.get("problem_attrs", {})))
        problems.append(make_problem(
            ev,
            description=extra["description"],
            severity=severity,
            problem_type=extra.get("problem_type", ev.cls.problem_type),
            actions=extra.get("actions_description", ""),
            attrs=attrs,
        ))
    return sorted(problems, key=lambda p: SEVERITY_ORDER.get(p.severity, len(SEVERITY_ORDER)))


#: Insights that do not come from the verdicts (a model's speed and cost): kept for an untrusted judge.
_VERDICT_FREE_INSIGHTS = ("performance", "cost")


def derive_findings(ev: ScoredEvaluator, judge_trust: JudgeTrust | None = None,
                    stats: StatsSettings | None = None) -> EvaluatorFindings:
    """The findings of ``ev``, computed once; writers read them and compute nothing.

    ``judge_trust``: the calibration of a judge evaluator's judge. An untrusted judge's verdicts
    give one problem about the judge, no problem or verdict insight about the models, and a
    leaderboard that ranks no model (:mod:`.judge_trust`).
    ``stats``: the run's interval and test settings; the leaderboard then carries an interval per
    model and metric and the paired tests between models (:mod:`.confidence`), and the best-model
    insight says whether the lead is significant. None: no intervals, no tests.
    Rows of several epochs (``Row.epoch``) are first reduced to one per test case and model with
    ``stats.epoch_reducer`` (:mod:`.epochs`): everything below counts test cases; the findings'
    ``scored`` keeps every epoch's row.
    """
    shown = ev
    epochs = reduce_epochs(ev, stats.epoch_reducer, stats.epochs) if stats is not None else reduce_epochs(ev)
    if epochs is not None:
        ev, shown = epochs.reduced, epochs.shown
    board = build_leaderboard(ev)
    if epochs is not None:
        board = epochs.annotate(board)
    if judge_trust is not None:
        board = replace(board, judge_trust=judge_trust)
    if judge_trust is None or judge_trust.counts:
        insights = standard_insights(ev) + (epochs.insights() if epochs is not None else [])
        if stats is not None:
            board = annotate_board(board, ev, stats)
            lead_insight(insights, board)
        return _findings(shown, ev, board, collect_problems(ev), insights + evaluator_insights(ev), judge_trust)
    # Models keep their values, in name order, but no rank: the judge's verdicts are not evidence.
    board = replace(board, unranked_models=tuple(sorted(board.ranking)), ranking=(),
                    rows=tuple(sorted((replace(row, rank=None) for row in board.rows), key=lambda row: row.model)))
    if stats is not None:
        board = annotate_board(board, ev, stats)  # intervals on the values kept; no ranking, so no tests
    problems = [calibration_problem(ev, judge_trust)] + dataset_problems(ev) + fallback_problems(ev)
    insights = [i for i in standard_insights(ev) if i.insight_type in _VERDICT_FREE_INSIGHTS]
    return _findings(shown, ev, board, problems, insights, judge_trust)


def _findings(shown: ScoredEvaluator, reduced: ScoredEvaluator, board: Board, problems: list[Problem],
              insights: list[Insight], judge_trust: JudgeTrust | None) -> EvaluatorFindings:
    """The findings with ``board``: pass counts and weakest rows over ``shown`` (every epoch's rows, as
    the reports show them), fallbacks over ``reduced`` (one row per test case and model)."""
    leaderboard = typed_leaderboard(shown, board)
    return EvaluatorFindings(scored=shown, board=board, problems=problems, insights=insights, leaderboard=leaderboard,
                             weakest=weakest_rows(shown, leaderboard.untrusted), cases=case_rows(shown),
                             judge_trust=judge_trust,
                             fallbacks=fallback_notes(reduced))
