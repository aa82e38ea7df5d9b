"""The run journal: ``journal.jsonl``, one JSON object per line, appended as the run goes.

Each event has ``timestamp`` (ISO 8601, UTC), ``message``, ``class`` and ``method`` (where in
Sonar it was written) and, where they apply, ``test_case_key``, ``model_key`` and
``evaluator``. Messages follow ModelBench's journal where the meaning is the same:
``starting journal``, ``starting run``, ``queuing item``, ``evaluator scored``,
``finished pipeline``, ``finished run``. A run on Ray (:mod:`sonar_core.execution.ray_executor`) adds
``started executor`` (executor, address, the cluster's resources and nodes) and carries
``executor``, ``shard``, ``shards``, ``node``, ``pid`` and ``on`` in each ``measured batch quality``
(one per shard), and ``asked shard`` per chunk of pipeline items; the workers' own events come back
with their shards and are written by the driver. Sonar adds ``loaded plugins``, ``plugin failed``,
``loaded dataset``, ``resuming run``, ``skipping finished evaluator``, ``evaluator skipped``,
``evaluator failed``, ``rows skipped``, ``rows limited``, ``measured batch quality``,
``wrote artifacts``, ``run interrupted``, ``embedding cache info`` (texts requested and encoded
per embedding model, models loaded). LLM judges add ``fetched annotator response``, ``using cached
annotator response``, ``retrying annotator request``, ``annotator request failed``
(:mod:`sonar_core.llm.client`) and, once per run that used the response cache, ``cache info``
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

Every write is flushed, so a killed run leaves a journal that ends at its last event.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from . import names

__all__ = ["Journal"]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class Journal:
    """Appends events to a JSONL file (or nowhere, when ``path`` is None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file = open(path, "a", encoding="utf-8") if path is not None else None
        # LLM clients write from several threads: one lock keeps each line whole.
        self._lock = threading.Lock()
        self.event("starting journal", "Journal", "__init__", schema_version=names.JOURNAL_SCHEMA_VERSION, pid=os.getpid())

    def _line(self, message: str, cls: str, method: str, fields: dict[str, Any]) -> str:
        record = {"timestamp": _now(), "message": message, "class": cls, "method": method}
        record.update({k: v for k, v in fields.items() if v is not None})
        return json.dumps(record, ensure_ascii=False, default=str)

    def event(self, message: str, cls: str, method: str, **fields: Any) -> None:
        """Write one event and flush it."""
        if self._file is None:
            return
        line = self._line(message, cls, method, fields) + "\n"
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
