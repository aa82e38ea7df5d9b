"""Machine-readable listings for ``sonar evaluators --json``, ``describe --json``, ``plugins --json``,
``hosts --json``, ``models --json``, ``perturbators --json`` and ``judges --json``, and the evaluators
table ``sonar evaluators`` prints for people.

Each listing is plain JSON data with a ``schema_version``; docs/cli.md documents the shapes.
They are built from the evaluators' declarations and the plugin manager only, so a script can
rely on them without parsing the tables the commands print for people.

The table (:func:`evaluators_table`) fits the terminal: with room, one column per flag (the
catalogue overview's, :data:`~sonar_core.catalogue.OVERVIEW_COLUMNS`); narrower (80 or 100
columns), the flags are grouped (``For``, ``Inputs``) and names wrap. Ids never wrap nor are cut:
they are what a user types. :func:`evaluators_legend` explains the abbreviations.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from .contract import Evaluator, Metric, Param
from .listing_shapes import (EvaluatorDescription, EvaluatorFields, EvaluatorsListing, HostKindEntry, HostsListing,
                             JudgesListing, MetricEntry, ModelsListing, ParameterEntry, PerturbatorEntry,
                             PerturbatorsListing, FailureEntry, PluginsListing, SettingEntry)
from .plugins import PluginManager

__all__ = ["LISTING_SCHEMA_VERSION", "evaluators_listing", "evaluator_description", "plugins_listing",
           "hosts_listing", "models_listing", "perturbators_listing", "judges_listing", "to_json", "evaluators_table",
           "evaluators_legend"]

#: Version of the three listing shapes (docs/cli.md, "Machine-readable output").
LISTING_SCHEMA_VERSION = "1.0"


def _evaluator_summary(cls: type[Evaluator], plugins: PluginManager) -> EvaluatorFields:
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


def _metric(metric: Metric, primary: str) -> MetricEntry:
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


def _parameter(param: Param) -> ParameterEntry:
    return {
        "name": param.name,
        "type": param.type.__name__,
        "default": param.default,
        "description": param.description,
        "min": _number(param.min),
        "max": _number(param.max),
        "choices": list(param.choices),
    }


def _failures(plugins: PluginManager) -> list[FailureEntry]:
    return [{"plugin": f.name, "stage": f.stage, "error": f.error} for f in plugins.failures]


def evaluators_listing(plugins: PluginManager) -> EvaluatorsListing:
    """``sonar evaluators --json``: every registered evaluator, sorted by id."""
    return {
        "schema_version": LISTING_SCHEMA_VERSION,
        "evaluators": [
            {**_evaluator_summary(cls, plugins), "metric_keys": [m.key for m in cls.metrics]}
            for cls in plugins.evaluators.values()
        ],
        "plugin_failures": _failures(plugins),
    }


def evaluator_description(cls: type[Evaluator], plugins: PluginManager) -> EvaluatorDescription:
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


def plugins_listing(plugins: PluginManager) -> PluginsListing:
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


def _setting(name: str, field: Any) -> SettingEntry:
    annotation = field.annotation
    type_name = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
    required = field.is_required()
    return {"name": name, "type": type_name, "required": required, "default": None if required else field.default}


def hosts_listing(plugins: PluginManager) -> HostsListing:
    """``sonar hosts --json``: the settings every host kind has, then each kind (sorted) with its own
    settings (those it adds, and those whose default it changes) and the plugin that registered it."""
    from .hosts.client_host import HostSpec
    from .hosts.registry import host_kinds

    factories, owners = host_kinds(plugins)
    common = HostSpec.model_fields
    kinds: list[HostKindEntry] = []
    for kind in sorted(factories):
        spec = getattr(factories[kind], "spec_model", None)
        own: list[SettingEntry] = []
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


def to_json(listing: Mapping[str, object]) -> str:
    """Indented UTF-8 JSON; a parameter default that is not JSON (a plugin's own type) becomes text."""
    return json.dumps(listing, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def evaluators_legend() -> str:
    """What the evaluators table's abbreviations mean (printed under it)."""
    from .contract import Input

    inputs = ", ".join(f"{needed.short} {needed.label}" for needed in Input)
    return (f"LLM / RAG: evaluates plain LLM answers / RAG answers (with retrieved context). J: asks an LLM "
            f"judge. GPU: uses a GPU when there is one. Inputs every row needs: {inputs}. "
            f"`sonar describe ID` shows one evaluator's metrics and parameters.")


def print_evaluators(plugins: PluginManager, console: Any) -> None:
    """``sonar evaluators``: the table that fits ``console`` (a rich Console), what is not installed, the legend."""
    table, needs = evaluators_table(plugins, console)
    console.print(table)
    for requirement, ids in needs.items():
        console.print(f"Not installed, {requirement} needed: {', '.join(ids)}.", highlight=False, markup=False)
    console.print(evaluators_legend(), highlight=False, markup=False)


def evaluators_table(plugins: PluginManager, console: Any) -> tuple[Any, dict[str, list[str]]]:
    """The rich table of ``sonar evaluators`` that fits ``console`` (module docstring), and, when it is the
    narrow one, the evaluators whose extra is missing by what they need (the wide one has a Needs column)."""
    from rich import box
    from rich.measure import Measurement

    from .catalogue import OVERVIEW_COLUMNS, overview_cells
    from .contract import Input
    from .terminal import RichTable, RichText

    evaluators = plugins.evaluators
    # Evaluators whose extra is not installed say what they need, in a column shown only then.
    needs = {eid: cls.needs() for eid, cls in evaluators.items()}
    extra = ("Needs",) if any(needs.values()) else ()
    id_width = max((len(eid) for eid in evaluators), default=2)
    wide = RichTable(title="Sonar evaluators")
    for column in ("Id", "Name", "Kind", *OVERVIEW_COLUMNS, *extra):
        wide.add_column(column, no_wrap=column == "Id", min_width=id_width if column == "Id" else None)
    for eid, cls in evaluators.items():
        wide.add_row(eid, cls.display_name, cls.kind.value, *overview_cells(cls),
                     *((RichText(needs[eid] or ""),) if extra else ()))
    width = console.width
    unbounded = console.options.update_width(10_000)  # the table's natural width, not clamped to the console
    if Measurement.get(console, unbounded, wide).maximum <= width:
        return wide, {}
    narrow = RichTable(title="Sonar evaluators", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    narrow.add_column("Id", no_wrap=True, min_width=id_width)
    for column in ("Kind", "For", "J", "Inputs", "GPU"):
        narrow.add_column(column, no_wrap=column != "Inputs")
    # The names, when at least 16 columns are left for them (they wrap).
    with_name = Measurement.get(console, unbounded, narrow).maximum + 16 <= width
    if with_name:
        narrow.add_column("Name", ratio=1)
    for eid, cls in evaluators.items():
        compatible = " ".join(kind.upper() for kind in ("llm", "rag") if kind in cls.compatibility)
        inputs = " ".join(needed.short for needed in Input if needed in cls.required_inputs)
        narrow.add_row(eid, cls.kind.value, compatible, "✓" if cls.requires_judge else "", inputs,
                       "✓" if cls.supports_gpu else "", *((cls.display_name,) if with_name else ()))
    missing: dict[str, list[str]] = {}
    for eid, requirement in needs.items():
        if requirement:
            missing.setdefault(requirement, []).append(eid)
    return narrow, missing


# -- what evaluators use: models, perturbators, judges ---------------------------------------


def models_listing(plugins: PluginManager) -> ModelsListing:
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


def perturbators_listing(plugins: PluginManager, text: str | None = None, seed: int = 0) -> PerturbatorsListing:
    """``sonar perturbators --json``: each perturbator (sorted) with its parameters; with ``text``, what
    it makes of that text (default parameters, ``seed``)."""
    from .perturbations import make_perturbator, perturbators

    entries: list[PerturbatorEntry] = []
    for name, cls in perturbators(plugins).items():
        entry: PerturbatorEntry = {"name": name, "description": cls.description, "seeded": bool(cls.random),
                 "parameters": [_parameter(p) for p in cls.parameters]}
        if text is not None:
            import numpy as np

            entry["output"] = make_perturbator(name, plugins=plugins).apply(text, np.random.default_rng(seed))
        entries.append(entry)
    return {"schema_version": LISTING_SCHEMA_VERSION, "perturbators": entries,
            "plugin_failures": _failures(plugins)}


#: The columns of ``sonar judges`` (its rows' order), as ``sonar judges --json`` names them.
JUDGE_FIELDS = ("key", "backend", "model", "endpoint", "api_key_env", "status")


def judges_listing(rows: list[tuple], default_judge: str, source: str | None) -> JudgesListing:
    """``sonar judges --json``: the LLM configurations (``check_configs``'s rows) and the default judge."""
    return {"schema_version": LISTING_SCHEMA_VERSION, "configs_file": source or None,
            "default_judge": default_judge, "configs": [dict(zip(JUDGE_FIELDS, row)) for row in rows]}
