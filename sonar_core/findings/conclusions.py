"""What the reports tell about one evaluator's models, concluded here rather than in the writers.

:func:`typed_leaderboard` reads the leaderboard :func:`~.leaderboards.build_leaderboard` and
:mod:`.confidence` made and concludes, per model, whether each metric's mean fails its threshold,
how many rows pass the primary metric's threshold, and which model leads; :func:`weakest_rows`
picks the rows "Weakest answers" lists.
"""

from __future__ import annotations

import heapq
from .scored import ScoredEvaluator
from .types import WEAK_ROWS_LIMIT, Board, Leaderboard, LeaderboardRow, WeakRow

__all__ = ["WEAK_ROWS_LIMIT", "typed_leaderboard", "weakest_rows"]


def _pass_counts(ev: ScoredEvaluator) -> dict[str, tuple[int, int]]:
    """model -> (rows on the right side of the primary threshold, rows scored); NaN and None are not scored."""
    counts: dict[str, list[int]] = {}
    primary = ev.primary  # once, not once per row
    for row, result in ev.scored:
        value = result.values.get(primary.key)
        if value is None or value != value:  # None or NaN: not scored
            continue
        entry = counts.setdefault(row.model_key, [0, 0])
        entry[1] += 1
        entry[0] += not ev.metric_fails(primary, value)
    return {model: (passed, checked) for model, (passed, checked) in counts.items()}


def typed_leaderboard(ev: ScoredEvaluator, board: Board) -> Leaderboard:
    """The typed leaderboard of ``ev`` from its ``board``.

    An untrusted judge's verdicts count nowhere: its rows pass nothing (0 of 0 checked). The leader
    is the first-ranked model only when its primary value is strictly ahead of the second's: with a
    tie at the top, the ranking's order is only the model names' order.
    """
    primary = ev.primary
    untrusted = board.untrusted
    aggregates = {row.model: row.metrics for row in board.rows}
    fails_by_metric = {m.key: {model: m.fails(values.get(m.key), ev.thresholds[m.key])
                               for model, values in aggregates.items()} for m in ev.cls.metrics}
    passes = {} if untrusted else _pass_counts(ev)
    rows = []
    for row in board.rows:
        model = row.model
        interval = (row.intervals or {}).get(primary.key)
        passed, checked = passes.get(model, (0, 0))
        rows.append(LeaderboardRow(model=model, rank=row.rank, value=row.metrics.get(primary.key),
                                   ci_low=interval.ci_low if interval else None,
                                   ci_high=interval.ci_high if interval else None,
                                   n=interval.n if interval else None, passed=passed, checked=checked,
                                   fails=fails_by_metric[primary.key][model]))
    # Models scored by no row of the board (none today) still count their passes.
    rows += [LeaderboardRow(model=m, rank=None, value=None, passed=p, checked=c)
             for m, (p, c) in sorted(passes.items()) if m not in aggregates]
    ranking = board.ranking
    top = [aggregates[model].get(primary.key) for model in ranking[:2]]
    leader = ranking[0] if len(top) == 2 and top[0] is not None and top[0] != top[1] else None
    return Leaderboard(primary_metric=primary.key, ranking=ranking, rows=tuple(rows), leader=leader,
                       untrusted=untrusted, fails_by_metric=fails_by_metric)


def weakest_rows(ev: ScoredEvaluator, untrusted: bool, limit: int = WEAK_ROWS_LIMIT) -> tuple[WeakRow, ...]:
    """The ``limit`` rows furthest on the wrong side of the primary threshold (ties by test case, then
    model). None for an untrusted judge: its verdicts call no answer weak."""
    if untrusted:
        return ()
    sign = 1 if ev.primary.higher_is_better else -1
    chosen = heapq.nsmallest(
        limit,
        ((result.values[ev.primary.key], row, result) for row, result in ev.failing(ev.primary)),
        key=lambda item: (sign * item[0], item[1].test_case_key, item[1].model_key),
    )
    return tuple(WeakRow(score, row, result) for score, row, result in chosen)
