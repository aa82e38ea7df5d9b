"""Machine-readable listings for ``sonar evaluators --json``, ``describe --json``, ``plugins --json``,
``hosts --json``.

Each listing is plain JSON data with a ``schema_version``; docs/cli.md documents the shapes.
They are built from the evaluators' declarations and the plugin manager only, so a script can
rely on them without parsing the tables the commands print for people.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .contract import Evaluator, Metric, Param
from .plugins import PluginManager

__all__ = ["LISTING_SCHEMA_VERSION", "evaluators_listing", "evaluator_description", "plugins_listing",
           "hosts_listing", "to_json"]

#: Version of the three listing shapes (docs/cli.md, "Machine-readable output").
LISTING_SCHEMA_VERSION = "1.0"


def _evaluator_summary(cls: type[Evaluator], plugins: PluginManager) -> dict[str, Any]:
    """The fields an evaluator has in both the list and its description."""
    return {
        "id": cls.id,
        "qualified_name": cls.qualified_name(),
        "display_name": cls.display_name,
        "tagline": cls.tagline,
        "plugin": plugins.owner_of(cls.id),
        "kind": cls.kind.value,
        "category": cls.category,
        "problem_type": cls.problem_type,
        "compatibility": list(cls.compatibility),
        "required_inputs": [needed.value for needed in cls.required_inputs],
        "optional_inputs": [needed.value for needed in cls.optional_inputs],
        "requires_judge": cls.requires_judge,
        "supports_gpu": cls.supports_gpu,
        "offline": cls.offline,
        "primary_metric": cls.primary_metric().key,
        # The extra it needs beyond the base install, and that requirement again when it is not installed.
        "extra": cls.extra,
        "needs": cls.needs(),
    }


def _number(value: Any) -> Any:
    """JSON has no infinity or NaN: a plugin's unbounded range end is written as null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _metric(metric: Metric, primary: str) -> dict[str, Any]:
    return {
        "key": metric.key,
        "display_name": metric.display_name,
        "description": metric.description,
        "value_range": [_number(float(v)) for v in metric.value_range],
        "higher_is_better": metric.higher_is_better,
        "threshold": _number(float(metric.threshold)),
        "is_primary": metric.key == primary,
        "role": metric.role.value if metric.role else None,
        "raises_problems": metric.raises_problems,
        "model_level": metric.model_level,
    }


def _parameter(param: Param) -> dict[str, Any]:
    return {
        "name": param.name,
        "type": param.type.__name__,
        "default": param.default,
        "description": param.description,
        "min": _number(param.min),
        "max": _number(param.max),
        "choices": list(param.choices),
    }


def _failures(plugins: PluginManager) -> list[dict[str, str]]:
    return [{"plugin": f.name, "stage": f.stage, "error": f.error} for f in plugins.failures]


def evaluators_listing(plugins: PluginManager) -> dict[str, Any]:
    """``sonar evaluators --json``: every registered evaluator, sorted by id."""
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        "evaluators": [
            {**_evaluator_summary(cls, plugins), "metric_keys": [m.key for m in cls.metrics]}
            for cls in plugins.evaluators.values()
        ],
        "plugin_failures": _failures(plugins),
    }


def evaluator_description(cls: type[Evaluator], plugins: PluginManager) -> dict[str, Any]:
    """``sonar describe ID --json``: one evaluator with its metrics and parameters."""
    primary = cls.primary_metric().key
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        **_evaluator_summary(cls, plugins),
        "description": cls.description,
        "needs_all_rows": cls.needs_all_rows,
        "sensitive_outputs": cls.sensitive_outputs,
        "metrics": [_metric(m, primary) for m in cls.metrics],
        "parameters": [_parameter(p) for p in cls.all_parameters()],
        "differences": [d.as_dict() for d in cls.differences],
    }


def plugins_listing(plugins: PluginManager) -> dict[str, Any]:
    """``sonar plugins --json``: loaded plugins in load order, then those that failed."""
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        "plugins": [
            {"name": p.name, "module": p.module, "distribution": p.distribution, "version": p.version,
             "hooks": list(p.hooks), "evaluators": list(p.evaluators)}
            for p in plugins.plugins
        ],
        "failures": _failures(plugins),
    }


def _setting(name: str, field: Any) -> dict[str, Any]:
    annotation = field.annotation
    type_name = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
    required = field.is_required()
    return {"name": name, "type": type_name, "required": required, "default": None if required else field.default}


def hosts_listing(plugins: PluginManager) -> dict[str, Any]:
    """``sonar hosts --json``: the settings every host kind has, then each kind (sorted) with its own
    settings (those it adds, and those whose default it changes) and the plugin that registered it."""
    from .hosts.client_host import HostSpec
    from .hosts.registry import host_kinds

    factories, owners = host_kinds(plugins)
    common = HostSpec.model_fields
    kinds = []
    for kind in sorted(factories):
        spec = getattr(factories[kind], "spec_model", None)
        own = []
        if spec is not None:
            for name, field in spec.model_fields.items():
                if name in ("key", "kind"):
                    continue
                if name not in common or field.default != common[name].default:
                    own.append(_setting(name, field))
        description = " ".join(((spec.__doc__ or "") if spec is not None else "").split())
        kinds.append({"kind": kind, "plugin": owners[kind], "description": description,
                      "settings": own if spec is not None else None})
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        "common_settings": [_setting(name, field) for name, field in common.items()],
        "host_kinds": kinds,
        "plugin_failures": _failures(plugins),
    }


def to_json(listing: dict[str, Any]) -> str:
    """Indented UTF-8 JSON; a parameter default that is not JSON (a plugin's own type) becomes text."""
    return json.dumps(listing, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
