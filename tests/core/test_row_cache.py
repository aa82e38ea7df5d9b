"""Finished rows kept for evaluators that set ``caches_row_results`` (sonar_core.execution.row_cache)."""

from __future__ import annotations

import time

from sonar_core.contract import Metric, MetricRole, RowResult
from sonar_core.llm.cache import ResponseCache
from sonar_core.execution.row_cache import RowResultCache
from sonar_core.testing import make_row


class _Costly:
    id = "costly"
    result_version = "3"
    metrics = (Metric("score", "Score", "a score", threshold=0.5),
               Metric("costly_parse_failures", "Parse failures", "rows not scored", higher_is_better=False,
                      threshold=0.2, role=MetricRole.PARSE_FAILURE))


def _cache(tmp_path, mode="use", fresh_since=None):
    return ResponseCache(tmp_path / "cache.sqlite", mode, fresh_since)


def test_a_row_comes_back_with_its_values_details_message_and_meta(tmp_path):
    cache = RowResultCache(_cache(tmp_path), _Costly, {"k": 1}, {"model": "judge-a"})
    row = make_row(input="Q?", actual_output="A.", context=["c1"])
    result = RowResult(values={"score": 0.25, "costly_parse_failures": 0.0}, details={"claims": [{"claim": "A."}]},
                       error_message="1 of 4 claims", actual_output_meta=[{"sentence": "A.", "score": 0.25}])
    key = cache.key(row)
    assert cache.get(key) is None
    cache.put(key, result)
    again = RowResultCache(_cache(tmp_path), _Costly, {"k": 1}, {"model": "judge-a"})
    assert again.get(again.key(row)) == result and again.hits == 1


def test_the_key_covers_parameters_judge_inputs_and_version(tmp_path):
    row = make_row(input="Q?", actual_output="A.", context=["c1"])
    base = RowResultCache(_cache(tmp_path), _Costly, {"k": 1}, {"model": "judge-a"}).key(row)
    assert RowResultCache(_cache(tmp_path), _Costly, {"k": 2}, {"model": "judge-a"}).key(row) != base
    assert RowResultCache(_cache(tmp_path), _Costly, {"k": 1}, {"model": "judge-b"}).key(row) != base
    other = make_row(input="Q?", actual_output="A.", context=["c2"])
    assert RowResultCache(_cache(tmp_path), _Costly, {"k": 1}, {"model": "judge-a"}).key(other) != base

    class _Newer(_Costly):
        result_version = "4"

    assert RowResultCache(_cache(tmp_path), _Newer, {"k": 1}, {"model": "judge-a"}).key(row) != base


def test_a_row_that_was_not_scored_is_not_kept(tmp_path):
    cache = RowResultCache(_cache(tmp_path), _Costly, {}, None)
    row = make_row(input="Q?", actual_output="A.")
    cache.put(cache.key(row), RowResult(values={"score": None, "costly_parse_failures": 1.0}, error_message="no JSON"))
    assert cache.get(cache.key(row)) is None and cache.writes == 0


def test_refresh_reads_only_rows_written_since_the_run_began_and_off_keeps_nothing(tmp_path):
    row = make_row(input="Q?", actual_output="A.")
    result = RowResult(values={"score": 1.0, "costly_parse_failures": 0.0})
    old = RowResultCache(_cache(tmp_path), _Costly, {}, None)
    old.put(old.key(row), result)
    refreshing = RowResultCache(_cache(tmp_path, "refresh", time.time() + 1), _Costly, {}, None)
    assert refreshing.get(refreshing.key(row)) is None
    off = RowResultCache(_cache(tmp_path, "off"), _Costly, {}, None)
    off.put(off.key(row), result)
    assert off.get(off.key(row)) is None
