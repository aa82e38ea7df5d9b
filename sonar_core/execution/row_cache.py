"""Cached row results of judge evaluators whose own per-row work is costly even with cached answers.

The LLM response cache already makes a rerun ask the judge nothing, but a library such as ragas
still renders, parses and combines every prompt of every row again (milliseconds per prompt,
thousands of prompts). An evaluator that sets ``caches_row_results = True`` has its finished
rows kept in the response cache's file, keyed by everything the row's result depends on: the
evaluator and its ``result_version``, Sonar's version, the parameters, the judge's identity
(model, endpoint, sampling; never a key) and the row's inputs. A rerun reads such rows back
instead of scoring them.

The cache's mode applies as to answers: ``--no-cache`` neither reads nor writes rows,
``--refresh-cache`` reads only rows written by this run. A row that could not be scored (its
parse-failure metric is set: a failed call, an answer that could not be parsed) is not kept,
so the next run tries it again.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..contract import MetricRole, RowResult
from ..dataset import Row

if TYPE_CHECKING:  # pragma: no cover
    from ..llm.cache import ResponseCache

__all__ = ["RowResultCache", "ROW_CACHE_FORMAT"]

#: Part of every key: a change in what a key covers starts a fresh set of rows.
ROW_CACHE_FORMAT = 1


def _row_inputs(row: Row) -> list[Any]:
    return [row.input, row.expected_output, list(row.context), row.actual_output, row.output_condition,
            list(row.output_constraints)]


class RowResultCache:
    """One evaluator's cached rows in a :class:`~sonar_core.llm.cache.ResponseCache` file."""

    def __init__(self, cache: "ResponseCache", evaluator_cls: type, params: dict[str, Any],
                 judge_identity: dict[str, Any] | None) -> None:
        from ..version import __version__

        self.cache = cache
        self.evaluator_id = evaluator_cls.id
        self._parse_keys = [m.key for m in evaluator_cls.metrics if m.role is MetricRole.PARSE_FAILURE]
        self._base = {"format": ROW_CACHE_FORMAT, "evaluator": evaluator_cls.id,
                      "version": str(getattr(evaluator_cls, "result_version", "1")), "sonar": __version__,
                      "params": params, "judge": judge_identity}
        self.hits = 0
        self.writes = 0

    def key(self, row: Row) -> str:
        canonical = json.dumps({**self._base, "row": _row_inputs(row)}, sort_keys=True, ensure_ascii=False,
                               separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> RowResult | None:
        text = self.cache.get_row(key)
        if text is None:
            return None
        data = json.loads(text)
        self.hits += 1
        return RowResult(values=data["values"], details=data.get("details") or {},
                         error_message=data.get("error_message"), actual_output_meta=data.get("actual_output_meta"))

    def put(self, key: str, result: RowResult) -> None:
        if any(result.values.get(k) for k in self._parse_keys):
            return  # not scored: the next run tries again
        payload = json.dumps({"values": result.values, "details": result.details,
                              "error_message": result.error_message,
                              "actual_output_meta": result.actual_output_meta}, ensure_ascii=False, default=str)
        self.cache.put_row(key, self.evaluator_id, payload)
        self.writes += 1
