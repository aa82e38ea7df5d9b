"""Where a run's rows are scored: the executor behind ``executor: local | ray``.

Every executor gives :func:`~sonar_core.execution.scoring.score_job` the same thing: the rows to
score handed back as batches, in row order, each with its results, the seconds it took and the
journal fields that say where it ran. Everything around that (the row cache, the journal's batch
summaries, the progress bar, findings and artifacts) is the same code for every executor, which is
why a run's artifacts do not depend on where its rows were scored.

:class:`LocalExecutor` (the default) scores here, one ``evaluate()`` call per batch, exactly as a
run always has. The Ray executor (:mod:`.ray_executor`, imported only when asked for) sends shards
of rows to a Ray cluster; :mod:`.choose` makes the one a configuration asks for.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterator, TypedDict

from ..contract import Evaluator, RowResult
from ..dataset import Row

__all__ = ["LocalExecutor", "LOCAL", "Batch", "Placement"]


class Placement(TypedDict, total=False):
    """Where a batch was scored, for the journal's batch event (empty: in this process)."""
    executor: str  #: ``ray``
    shard: int
    shards: int
    node: str
    pid: int
    on: str
    actors: int  #: only where the evaluator's model was held by actors
    encoded: int

#: One scored batch: (position of its first row among the rows asked for, its rows, their results,
#: seconds it took, journal fields that say where it ran).
Batch = tuple[int, list[Row], list[RowResult], float, Placement]

class LocalExecutor:
    """Scores in this process: one ``evaluate()`` call per batch of ``size`` rows."""

    name = "local"

    def start(self, run_id: str, journal: Any, services: Any) -> None:
        """Nothing to start: the local executor writes no journal event, so local runs stay as they were."""

    def batches(self, job: Any, evaluator: Evaluator, rows: list[Row], size: int, *, services: Any = None,
                journal: Any = None, logger: logging.Logger | None = None) -> Iterator[Batch]:
        for start in range(0, len(rows), size):
            began = time.perf_counter()
            batch = rows[start:start + size]
            results = list(evaluator.evaluate(batch))
            yield start, batch, results, time.perf_counter() - began, {}

    def asker(self, hosts: Any, journal: Any) -> Callable | None:
        """How the host pipeline asks a host a chunk of prompts; None: the host's own ``ask_many``."""
        return None

    def close(self) -> None:
        """Nothing to release."""


#: The default executor (stateless, so one serves every run).
LOCAL = LocalExecutor()
