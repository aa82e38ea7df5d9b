"""cache_keys.json: the response-cache entries a run used, so ``sonar pack`` can take only those.

Written as the run closes (before the cache does), and merged with the file a resumed run's
first part wrote. A run that never opened the response cache (no judge, no cached host) writes
none. The keys are SHA-256 hashes (:func:`sonar_core.llm.cache.request_key`): no prompt, answer
or secret is in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import names
from ..artifacts.formats import write_json
from ..llm import LLMService

__all__ = ["record_cache_keys", "read_cache_keys"]


def read_cache_keys(run_dir: Path) -> tuple[set[str], set[str]]:
    """The (response keys, row-result keys) of ``run_dir``'s cache_keys.json; empty sets without one."""
    try:
        data = json.loads((run_dir / names.CACHE_KEYS).read_text(encoding="utf-8"))
        return set(data["responses"]), set(data["row_results"])
    except FileNotFoundError:
        return set(), set()


def record_cache_keys(llm: LLMService, run_dir: Path) -> None:
    used = llm.used_cache_keys()
    if used is None or not run_dir.is_dir():
        return
    responses, rows = read_cache_keys(run_dir)
    write_json(run_dir / names.CACHE_KEYS, {"schema_version": names.CACHE_KEYS_SCHEMA_VERSION,
                                           "responses": sorted(responses | used[0]),
                                           "row_results": sorted(rows | used[1])})
