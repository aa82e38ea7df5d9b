"""``perturb:`` of a run configuration: perturbed copies of test cases, linked to their originals.

Each entry of ``perturb:`` names a perturbator, its parameters, a seed and optionally the categories
of the test cases it applies to. For every test case it applies to, a copy is made whose prompt is
perturbed, whose ``test_case_key`` is ``<original>~<label>`` (label: the entry's ``name``, else the
perturbator's), with ``original_test_case_key`` and ``perturbation`` set, so the core's flip problems
compare the two. The copy's seed comes from the entry's seed, the original's key and the label, so a
test case is perturbed the same way whatever else the suite holds.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..contract import ParameterError
from ..dataset import RowFields
from ..jsontypes import JsonObject
from ..errors import ConfigError
from .base import derive_seed
from .registry import ALIASES, make_perturbator

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["expand_perturbations", "perturbed_key", "KEY_SEPARATOR"]

#: Between an original's test case key and the label of a perturbed copy.
KEY_SEPARATOR = "~"


def perturbed_key(test_case_key: str, label: str) -> str:
    """The test case key of ``test_case_key``'s copy perturbed by ``label``."""
    return f"{test_case_key}{KEY_SEPARATOR}{label}"


def _spec_fields(spec: Any, index: int) -> tuple[str, int, JsonObject, list[str], str]:
    where = f"perturb[{index}]"
    data = spec.model_dump() if hasattr(spec, "model_dump") else spec
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping with a 'perturbator', got {type(data).__name__}")
    unknown = sorted(set(data) - {"perturbator", "seed", "params", "categories", "name"})
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'")
    name = data.get("perturbator")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: missing required key 'perturbator'")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{where}: 'seed' must be an integer, got {seed!r}")
    label = data.get("name") or ALIASES.get(name, name)
    return name, seed, dict(data.get("params") or {}), list(data.get("categories") or []), label


def _get(row: Any, field: str) -> Any:
    return row.get(field) if isinstance(row, dict) else getattr(row, field)


def _copy(row: Any, **changes: Any) -> Any:
    if isinstance(row, dict):
        return {**row, **changes}
    return dataclasses.replace(row, **changes)


def expand_perturbations(rows: Sequence[Any], perturb_config: Iterable[Any] | None,
                          plugins: "Registries | None" = None) -> list[Any]:
    """``rows`` with, after each original, its perturbed copies (one per applicable ``perturb`` entry).

    Perturbators are looked up in ``plugins``' registry (the run's plugin manager, ``-p`` modules
    included); None means the process-wide plugin manager.

    ``rows`` are :class:`~sonar_core.dataset.Row` objects or dicts with ``test_case_key`` and ``input``;
    copies are of the same type. Rows that already are perturbed copies are not perturbed again.
    Entries are checked before any row is perturbed: ConfigError names the entry and the bad key.
    """
    entries = []
    labels: set[str] = set()
    for index, spec in enumerate(perturb_config or []):
        name, seed, params, categories, label = _spec_fields(spec, index)
        try:
            perturbator = make_perturbator(name, params, plugins)
        except ConfigError as exc:
            raise ConfigError(f"perturb[{index}]: {exc}") from None
        except ParameterError as exc:
            raise ConfigError(f"perturb[{index}]: {exc}") from None
        if label in labels:
            raise ConfigError(f"perturb[{index}]: label '{label}' is used twice; give one entry a distinct 'name'")
        labels.add(label)
        entries.append((perturbator, seed, set(categories), label))
    if not entries:
        return list(rows)
    import numpy as np

    existing = {_get(row, "test_case_key") for row in rows}
    expanded: list[Any] = []
    for row in rows:
        expanded.append(row)
        original = _get(row, "test_case_key")
        if _get(row, "original_test_case_key"):
            continue
        for perturbator, seed, categories, label in entries:
            if categories and not categories.intersection(_get(row, "categories") or []):
                continue
            key = perturbed_key(original, label)
            if key in existing:
                raise ConfigError(f"perturb: the perturbed copy's test case key '{key}' is taken by a test case "
                                  f"of the suite; rename that test case or give the entry another 'name'")
            text = perturbator.apply(_get(row, "input") or "", np.random.default_rng(derive_seed(seed, original, label)))
            changes = RowFields(input=text, test_case_key=key, original_test_case_key=original,
                                perturbation=perturbator.name)
            old_key = _get(row, "key") if not isinstance(row, dict) or "key" in row else None
            if old_key:
                # A row key built from the test case key (``tc::model``) keeps its shape.
                changes["key"] = key + old_key[len(original):] if old_key.startswith(original) \
                    else f"{old_key}{KEY_SEPARATOR}{label}"
            relationships = [r for r in (_get(row, "relationships") or []) if r.get("type") != "perturbation_of"]
            changes["relationships"] = relationships + [{"type": "perturbation_of", "target": original}]
            expanded.append(_copy(row, **changes))
    return expanded
