"""Results the evaluators of one run share, so the second to need one does not compute it again.

Some evaluators compute the same intermediate result on the same row. The RAGAS score, for one,
runs ragas's faithfulness, answer relevancy, context precision and context recall on each row,
exactly as the four evaluators of those names do; even with every judge answer cached, ragas
renders and parses each prompt again. An evaluator that computed such a result puts it in the
run memo under a key naming everything it depends on; another evaluator of the run that builds
the same key takes it from there.

The memo is the core's, not a plugin's: one per run, reached as ``ctx.memo``, in memory only,
bounded (the least recently used entries go first, so a long run degrades to computing again,
never to growing without end), and dropped when the run ends. A value is shared as it is: an
evaluator that changes what it got must copy it first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable

__all__ = ["RunMemo", "MEMO_LIMIT"]

#: Entries one run keeps at most.
MEMO_LIMIT = 20_000


class RunMemo:
    """``(namespace, key) -> value``, least recently used out first; thread-safe."""

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        self.limit = limit
        self._data: OrderedDict[tuple[str, Hashable], Any] = OrderedDict()
        self._lock = threading.Lock()
        #: Values taken from the memo / values put in, per namespace (for run.json and tests).
        self.hits: dict[str, int] = {}
        self.puts: dict[str, int] = {}

    def get(self, namespace: str, key: Hashable) -> Any | None:
        """The value kept under ``key`` in ``namespace``, or None."""
        with self._lock:
            value = self._data.get((namespace, key))
            if value is None:
                return None
            self._data.move_to_end((namespace, key))
            self.hits[namespace] = self.hits.get(namespace, 0) + 1
            return value

    def put(self, namespace: str, key: Hashable, value: Any) -> None:
        """Keep ``value`` (not None) under ``key`` in ``namespace``, replacing what was there."""
        if value is None:
            return
        with self._lock:
            self._data[(namespace, key)] = value
            self._data.move_to_end((namespace, key))
            self.puts[namespace] = self.puts.get(namespace, 0) + 1
            while len(self._data) > self.limit:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def summary(self) -> dict[str, dict[str, int]]:
        """Per namespace: how many values were put and how many were taken again."""
        with self._lock:
            return {name: {"put": self.puts.get(name, 0), "reused": self.hits.get(name, 0)}
                    for name in sorted(set(self.puts) | set(self.hits))}

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
