"""One evaluator's leaderboard (:class:`~sonar_core.findings.types.Board`) as H2O's JSON shapes.

:func:`board_json` lays the typed board out as the dict the page's view and the markdown read
(``schema_version``, the rows' keys in their written order, ``metrics_meta``); :func:`leaderboard_files`
splits it into the JSON index plus one ``leaderboard_<N>.json`` for all metrics and one per metric.
Nothing is concluded here: every value comes from the findings.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Union

from .. import names
from ..findings.judge_status import JudgeTrustJson
from .record_shapes import (BoardJson, BoardRowJson, IntervalJson, LeaderboardFileJson, LeaderboardIndexJson,
                            PairJson)

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.judge_status import JudgeTrust
    from ..findings.scored import ScoredEvaluator
    from ..findings.types import Board, BoardRow, MeanInterval, PairwiseTest

__all__ = ["board_json", "judge_trust_json", "leaderboard_files"]


def judge_trust_json(trust: JudgeTrust) -> JudgeTrustJson:
    """A judge's calibration as the leaderboard, the row results and run.json write it."""
    return {**asdict(trust), "summary": trust.summary()}


def _interval(entry: MeanInterval) -> IntervalJson:
    return {"ci_low": entry.ci_low, "ci_high": entry.ci_high, "n": entry.n, "method": entry.method}


def _pair(test: PairwiseTest) -> PairJson:
    discordant = test.discordant
    return {"model_a": test.model_a, "model_b": test.model_b, "metric": test.metric, "test": test.test, "n": test.n,
            "delta": test.delta, "p_value": test.p_value,
            **({"discordant": {"a_only": discordant[0], "b_only": discordant[1]}} if discordant is not None else {}),
            "p_adjusted": test.p_adjusted, "significant": test.significant}


def _row(row: BoardRow, board: Board) -> BoardRowJson:
    out: BoardRowJson = {"rank": row.rank, "model": row.model, "metrics": dict(row.metrics), "rows": row.rows,
                         "total_time": row.total_time, "total_cost": row.total_cost}
    if row.counts is not None:
        out["counts"] = dict(row.counts)
    if board.epochs is not None:
        out["consistency"] = row.consistency
    if board.confidence_level is not None:
        out["intervals"] = {key: _interval(entry) for key, entry in (row.intervals or {}).items()}
        out["tied_with_best"] = row.tied_with_best
    return out


def board_json(board: Board, ev: ScoredEvaluator) -> BoardJson:
    """``board`` as the leaderboard's JSON (with ``ev``'s metric meta and thresholds)."""
    out: BoardJson = {
        "schema_version": names.LEADERBOARD_SCHEMA_VERSION,
        "kind": board.kind,
        "primary_metric": board.primary_metric,
        "ranking": list(board.ranking),
        "rows": [_row(row, board) for row in board.rows],
        "metrics_meta": ev.cls.metrics_meta(ev.thresholds),
    }
    if board.epochs is not None:
        out["epochs"] = asdict(board.epochs)
    if board.judge_trust is not None:
        out["judge_trust"] = judge_trust_json(board.judge_trust)
    if board.unranked_models is not None:
        out["unranked_models"] = list(board.unranked_models)
    if board.confidence_level is not None:
        out["confidence_level"] = board.confidence_level
        out["pairwise"] = [_pair(test) for test in board.pairwise]
    return out


def leaderboard_files(ev: ScoredEvaluator,
                      board: BoardJson) -> dict[str, Union[LeaderboardFileJson, LeaderboardIndexJson]]:
    """The JSON index plus one file for all metrics and one per metric, from :func:`board_json`'s ``board``."""
    data = {row["model"]: row["metrics"] for row in board["rows"]}
    extra = {row["model"]: {k: row.get(k) for k in ("rank", "rows", "total_time", "total_cost", "counts",
                                                    "tied_with_best", "consistency") if k in row}
             for row in board["rows"]}
    intervals = {row["model"]: row["intervals"] for row in board["rows"] if "intervals" in row}
    meta = {m["key"]: m for m in board["metrics_meta"]}
    files: dict[str, Union[LeaderboardFileJson, LeaderboardIndexJson]] = {}
    index: dict[str, str] = {}
    keys = ["ALL_METRICS"] + [m.key for m in ev.cls.metrics]
    for n, key in enumerate(keys):
        name = f"leaderboard_{n}.json"
        index[key] = name
        selected = list(meta) if key == "ALL_METRICS" else [key]
        files[name] = {
            "schema_version": names.SCHEMA_VERSION,
            "kind": board["kind"],
            "metric": key,
            "ranking": board["ranking"],
            "data": {model: {k: values[k] for k in selected} for model, values in data.items()},
            # Beside each value of ``data``: its interval and sample size (findings.confidence).
            **({"intervals": {model: {k: values[k] for k in selected} for model, values in intervals.items()},
                "confidence_level": board["confidence_level"]} if intervals else {}),
            "models": extra,
            "metadata": {k: meta[k] for k in selected},
            **({"pairwise": board["pairwise"]} if "pairwise" in board else {}),
            **({"judge_trust": board["judge_trust"]} if "judge_trust" in board else {}),
        }
    files[f"{names.EXPLANATION_STEM}.json"] = {
        "schema_version": names.SCHEMA_VERSION,
        "kind": board["kind"],
        "primary_metric": board["primary_metric"],
        "files": index,
        "metrics": [m.key for m in ev.cls.metrics],
        **({"epochs": board["epochs"]} if "epochs" in board else {}),
        **({"pairwise": board["pairwise"]} if "pairwise" in board else {}),
        **({"judge_trust": board["judge_trust"]} if "judge_trust" in board else {}),
    }
    return files
