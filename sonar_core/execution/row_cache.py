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

Local-model evaluators (``model_params``: perplexity, GPTScore, toxicity, the embedding ones) have
their finished rows *recorded* the same way, keyed by their parameters (the model references) and the
job (so by the run: a row's value depends slightly on what it was batched with, and a pack must replay
the values its own run wrote, not a later run's), but a run reads them back only when it replays an evidence pack (cache-only,
:data:`~sonar_core.llm.cache.CACHE_ONLY_ENV`): a replay then loads no model. An ordinary run never
reads them, because the key cannot see which files a model reference stood for (a model prepared or
replaced later), and the models' own work is what the run is for.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..contract import MetricRole, RowResult
from ..dataset import Row
from ..params import ParamValues

if TYPE_CHECKING:  # pragma: no cover
    from ..llm.cache import ResponseCache
    from ..llm.configs import LLMIdentity

__all__ = ["RowResultCache", "ROW_CACHE_FORMAT", "records_model_rows"]

#: Part of every key: a change in what a key covers starts a fresh set of rows.
ROW_CACHE_FORMAT = 1


#: Fields of a conversation or agent row its evaluators read beyond the flat ones; in the key only when set,
#: so the keys of other rows stay as they were.
_CONVERSATION_FIELDS = ("conversation", "expected_tool_calls", "expected_outcome", "corpus")


def _row_inputs(row: Row) -> list[Any]:
    inputs: list[Any] = [row.input, row.expected_output, list(row.context), row.actual_output, row.output_condition,
                         list(row.output_constraints)]
    extra = {name: getattr(row, name) for name in _CONVERSATION_FIELDS if getattr(row, name)}
    if extra:
        inputs.append(extra)
    return inputs


def records_model_rows(cls: type) -> bool:
    """Whether an evaluator's rows are recorded for evidence packs (read back by a replay only): it scores
    with local models, row by row (one that needs every row at once cannot take some rows cached)."""
    return bool(cls.model_params) and not cls.needs_all_rows and not getattr(cls, "caches_row_results", False)


class RowResultCache:
    """One evaluator's cached rows in a :class:`~sonar_core.llm.cache.ResponseCache` file."""

    def __init__(self, cache: "ResponseCache", evaluator_cls: type, params: ParamValues,
                 judge_identity: LLMIdentity | None, *, reads: bool = True, per_turn: bool = False,
                 scope: str | None = None) -> None:
        """``reads``: False when rows are only recorded (a local-model evaluator's, for evidence packs):
        :meth:`get` then finds nothing and the rows are scored. ``per_turn``: the rows are scored turn by turn
        (execution/per_turn.py), a result of its own, never the whole answer's. ``scope``: part of every key
        (recorded rows: the job's id, which the run id decides). A model's value for a row depends, by a few
        units in the last place, on the other texts it was batched with (padding), so two runs that score
        the same row record different values: each run's record must be its own, or a later run would
        replace the rows an earlier run's pack replays."""
        from ..version import __version__

        self.cache = cache
        self.reads = reads
        self.evaluator_id = evaluator_cls.id
        self._parse_keys = [m.key for m in evaluator_cls.metrics if m.role is MetricRole.PARSE_FAILURE]
        self._base = {"format": ROW_CACHE_FORMAT, "evaluator": evaluator_cls.id,
                      "version": str(getattr(evaluator_cls, "result_version", "1")), "sonar": __version__,
                      "params": params, "judge": judge_identity, **({"per_turn": True} if per_turn else {}),
                      **({"scope": scope} if scope else {})}
        self.hits = 0
        self.writes = 0

    def key(self, row: Row) -> str:
        canonical = json.dumps({**self._base, "row": _row_inputs(row)}, sort_keys=True, ensure_ascii=False,
                               separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> RowResult | None:
        if not self.reads:
            return None
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
