"""The core's own problem about the models under test: a host whose items failed.

A host that keeps failing does not crash the run; its failed items are not scored (that would
read an outage as answer quality) but are counted here as a ``reliability`` problem.
"""

from __future__ import annotations

from typing import Any

from .. import names
from .row_keys import pair_keys
from .types import Problem, Source

__all__ = ["host_problems"]

_SOURCE = Source(explainer_id="sonar_core.pipeline", explainer_name="Host pipeline", evaluator_id="pipeline",
                 evaluator_label="pipeline")


def host_problems(counts: dict[str, dict[str, int]], failures: list[dict[str, Any]]) -> list[Problem]:
    """One core problem per host with failed items: HIGH when it answered none, else MEDIUM.

    ``counts``: host key -> its ``items`` and ``answered`` counts; ``failures``: the failed items
    (``model_key``, ``test_case_key``, ``error``), as the pipeline records them.
    """
    problems = []
    for key, c in counts.items():
        failed = [f for f in failures if f["model_key"] == key]
        if not failed:
            continue
        description = (f"Host {key}: {len(failed)} of {c['items']} items failed and were not scored; "
                       f"first error: {failed[0]['error']}")
        problems.append(Problem(
            source=_SOURCE, description=description, severity="HIGH" if c["answered"] == 0 else "MEDIUM",
            problem_type="reliability",
            actions="Check the host's endpoint, model or function (dataset/failed_items.json lists "
                    "every failed item), then resume the run (sonar run --resume) to ask them again.",
            attrs={"model_name": key, "failed_items": len(failed), "items": c["items"],
                   **pair_keys((f["test_case_key"], key) for f in failed),
                   "evaluator_name": "Host pipeline"},
            resources=(f"{names.DATASET_DIR}/{names.FAILED_ITEMS}",),
        ))
    return problems
