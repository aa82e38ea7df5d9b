"""Machine-readable listings of what evaluators use: ``sonar models --json``, ``sonar perturbators --json``
and ``sonar judges --json`` (the evaluator and plugin listings are in :mod:`sonar_core.listings`).

Each is plain JSON data with a ``schema_version`` (``LISTING_SCHEMA_VERSION``); docs/cli.md documents the
shapes. The commands' tables for people are printed from the same data, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Any

from .listings import LISTING_SCHEMA_VERSION, _failures, _parameter
from .plugins import PluginManager

__all__ = ["models_listing", "perturbators_listing", "judges_listing"]


def models_listing(plugins: PluginManager) -> dict[str, Any]:
    """``sonar models --json``: every model Sonar knows or an installed evaluator names by default, with
    where the store looks for it, whether it is there, and which evaluator parameters default to it."""
    from .models import KNOWN_MODELS, get_store

    store = get_store()
    used_by: dict[str, list[str]] = {}
    for eid, cls in plugins.evaluators.items():
        for param in cls.model_params:
            default = next((p.default for p in cls.all_parameters() if p.name == param), None)
            if default:
                used_by.setdefault(str(default), []).append(f"{eid}.{param}")
    # Group evaluator defaults by the model they name (an alias names the same model).
    statuses = {m.name: store.status(m.name) for m in KNOWN_MODELS}
    users: dict[str, list[str]] = {}
    for ref, evaluators in used_by.items():
        status = store.status(ref)
        statuses.setdefault(status.name, status)
        users.setdefault(status.name, []).extend(evaluators)
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        "store": str(store.root),
        "models": [{"name": name, "kind": status.kind or None, "present": status.present, "source": status.source,
                    "location": status.location, "used_by": users.get(name, []),
                    "provide": None if status.present else status.provide}
                   for name, status in statuses.items()],
        "plugin_failures": _failures(plugins),
    }


def perturbators_listing(plugins: PluginManager, text: str | None = None, seed: int = 0) -> dict[str, Any]:
    """``sonar perturbators --json``: each perturbator (sorted) with its parameters; with ``text``, what
    it makes of that text (default parameters, ``seed``)."""
    from .perturbations import make_perturbator, perturbators

    entries = []
    for name, cls in perturbators(plugins).items():
        entry = {"name": name, "description": cls.description, "seeded": bool(cls.random),
                 "parameters": [_parameter(p) for p in cls.parameters]}
        if text is not None:
            import numpy as np

            entry["output"] = make_perturbator(name, plugins=plugins).apply(text, np.random.default_rng(seed))
        entries.append(entry)
    return {"schema_version": LISTING_SCHEMA_VERSION, "perturbators": entries,
            "plugin_failures": _failures(plugins)}


#: The columns of ``sonar judges`` (its rows' order), as ``sonar judges --json`` names them.
JUDGE_FIELDS = ("key", "backend", "model", "endpoint", "api_key_env", "status")


def judges_listing(rows: list[tuple], default_judge: str, source: str | None) -> dict[str, Any]:
    """``sonar judges --json``: the LLM configurations (``check_configs``'s rows) and the default judge."""
    return {"schema_version": LISTING_SCHEMA_VERSION, "configs_file": source or None,
            "default_judge": default_judge, "configs": [dict(zip(JUDGE_FIELDS, row)) for row in rows]}
