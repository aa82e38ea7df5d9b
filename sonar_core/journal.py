"""The run journal: ``journal.jsonl``, one JSON object per line, appended as the run goes.

Each event has ``timestamp`` (ISO 8601, UTC), ``message``, ``class`` and ``method`` (where in
Sonar it was written) and, where they apply, ``test_case_key``, ``model_key`` and
``evaluator``. Messages follow ModelBench's journal where the meaning is the same:
``starting journal``, ``starting run``, ``evaluator scored``,
``finished pipeline``, ``finished run``. A run on Ray (:mod:`sonar_core.execution.ray_executor`) adds
``started executor`` (executor, address, the cluster's resources and nodes) and carries
``executor``, ``shard``, ``shards``, ``node``, ``pid`` and ``on`` in each ``measured batch quality``
(one per shard), and ``asked shard`` per chunk of pipeline items; the workers' own events come back
with their shards and are written by the driver. Sonar adds ``loaded plugins``, ``plugin failed``,
``loaded dataset``, ``resuming run``, ``queuing evaluator``, ``skipping finished evaluator``, ``evaluator skipped``,
``evaluator failed``, ``rows skipped``, ``rows limited``, ``measured batch quality``, ``cleaned text``,
``wrote artifacts``, ``run interrupted``, ``embedding cache info`` (texts requested and encoded
per embedding model, models loaded). LLM judges add ``fetched annotator response``, ``using cached
annotator response``, ``retrying annotator request``, ``annotator request failed``
and ``using in-flight annotator response`` (:mod:`sonar_core.llm.client`), ``concurrency limit changed``
(judges and hosts; :mod:`sonar_core.llm.adaptive`) and, once per run that used the response cache, ``cache info``
(before ``finished run``; one per kind of asker, ``sut`` and ``annotator``), and ``run memo info``
when evaluators shared results (:mod:`sonar_core.run_memo`). A run with a test
suite and hosts first asks the models under test (:mod:`sonar_core.execution.pipeline`): ``running pipeline``,
``using test items``, per item ``queuing item``, ``fetched sut response`` / ``using cached sut
response``, ``translated sut response``, then ``wrote llm dataset``; its evaluators also write
ModelBench's ``measured item quality`` per item.

Scoring is summarised per batch of rows (``measured batch quality``: rows, primary-metric mean,
failing rows, seconds) and per evaluator (``evaluator scored``: per-model means), not per row:
a line per row made the journal as large as the results and its writing a large share of a
fast evaluator's run. Every row's values are in the evaluator's llm-eval-results.

Every item message of ModelBench's journal (:data:`ITEM_MESSAGES`) carries 001's item fields
right after the common ones: ``test`` (the evaluator, or for the models' answers the test suite,
:attr:`Journal.item_test`), ``prompt_id`` (the test case key) and ``sut`` (the model key). A
benchmark run adds ``hazard info``, ``test info``, ``using test items`` per test, ``test scored``,
``hazard scored`` and ``benchmark scored`` (a calibration run: ``starting calibration run``,
``hazard calibrated``, ``benchmark calibrated``), fields in 001's order
(:mod:`sonar_core.execution.benchmark`).

Every write is flushed, so a killed run leaves a journal that ends at its last event.
"""

from __future__ import annotations

import json
import math
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from . import names
from .named_files import named_open

__all__ = ["Journal", "ITEM_MESSAGES"]

#: ModelBench's item messages: each carries the item fields ``test``, ``prompt_id`` and ``sut``.
ITEM_MESSAGES = frozenset({
    "queuing item", "fetched sut response", "using cached sut response", "translated sut response",
    "fetched annotator response", "using cached annotator response", "translated annotation",
    "measured item quality",
})


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float, however deeply nested, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class Journal:
    """Appends events to a JSONL file (or nowhere, when ``path`` is None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        # A failed write names the journal (a full disk's error names no file).
        self._file = named_open(path, "a", encoding="utf-8") if path is not None else None
        # LLM clients write from several threads: one lock keeps each line whole.
        self._lock = threading.Lock()
        #: The item field ``test`` of item messages that name no evaluator (the test suite's path).
        self.item_test: str | None = None
        self.event("starting journal", "Journal", "__init__", schema_version=names.JOURNAL_SCHEMA_VERSION, pid=os.getpid())

    def _line(self, message: str, cls: str, method: str, fields: dict[str, Any], nulls: bool = False) -> str:
        record = {"timestamp": _now(), "message": message, "class": cls, "method": method}
        if message in ITEM_MESSAGES and "test_case_key" in fields:
            test = fields.get("evaluator") or self.item_test
            if test is not None:
                record["test"] = test
            record["prompt_id"] = fields["test_case_key"]
            record["sut"] = fields.get("model_key")
        record.update({k: v for k, v in fields.items() if nulls or v is not None})
        try:
            return json.dumps(record, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError:
            # A NaN or infinity (an endpoint's usage, say): null, so every line stays strict JSON.
            return json.dumps(_finite(record), ensure_ascii=False, default=str)

    def event(self, message: str, cls: str, method: str, _nulls: bool = False, **fields: Any) -> None:
        """Write one event and flush it; ``_nulls``: keep fields whose value is None (as JSON null)."""
        if self._file is None:
            return
        line = self._line(message, cls, method, fields, _nulls) + "\n"
        with self._lock:
            if self._file is not None:
                self._file.write(line)
                self._file.flush()

    def events(self, message: str, cls: str, method: str, items: Iterable[dict[str, Any]]) -> None:
        """Write one event per item (e.g. per scored row) with a single flush."""
        if self._file is None:
            return
        text = "".join(self._line(message, cls, method, item) + "\n" for item in items)
        with self._lock:
            if self._file is not None:
                self._file.write(text)
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
