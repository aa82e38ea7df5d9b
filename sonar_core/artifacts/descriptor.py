"""``result_descriptor.json``: what an evaluator is, in H2O Sonar's descriptor shape."""

from __future__ import annotations

from .. import names
from ..contract import Evaluator, Input, ResultKind
from ..inputs import CATALOGUE_INPUTS
from ..jsontypes import JsonObject
from .record_shapes import DescriptorJson, ExplanationJson, ParameterJson

__all__ = ["descriptor", "requirements_table", "parameter_entries"]


def requirements_table(cls: type[Evaluator]) -> str:
    """The catalogue's Q/EA/RC/AA/C requirement table, in markdown (with a column for each
    conversation input the evaluator uses)."""
    header = "| Question | Expected answer | Retrieved context | Actual answer | Conditions |"
    extra = [needed for needed in Input if needed not in CATALOGUE_INPUTS
             and (needed in cls.required_inputs or needed in cls.optional_inputs)]
    header += "".join(f" {needed.label.capitalize()} |" for needed in extra)
    ticks = []
    for needed in (*CATALOGUE_INPUTS, *extra):
        if needed in cls.required_inputs:
            ticks.append("✓")
        elif needed in cls.optional_inputs:
            ticks.append("(optional)")
        else:
            ticks.append("")
    return f"{header}\n|---|---|---|---|---|{'---|' * len(extra)}\n| " + " | ".join(ticks) + " |"


def parameter_entries(cls: type[Evaluator], params: JsonObject | None = None) -> list[ParameterJson]:
    entries: list[ParameterJson] = []
    for p in cls.all_parameters():
        value = p.default if params is None else params.get(p.name, p.default)
        entries.append({
            "name": p.name,
            "description": p.description,
            "type": p.type.__name__,
            "val": value,
            "default": p.default,
            "predefined": list(p.choices),
            "min_": p.min,
            "max_": p.max,
            "category": "",
        })
    return entries


def _explanations(cls: type[Evaluator], params: JsonObject | None) -> list[ExplanationJson]:
    leaderboard = "global-llm-bool-leaderboard" if cls.kind is ResultKind.BOOL else "global-llm-heatmap-leaderboard"
    # With save_llm_result off the eval results are not written, so they are not listed either.
    results: list[ExplanationJson] = [] if params is not None and params.get("save_llm_result") is False else [
        {"explanation_type": "global-llm-eval-results", "name": "LLM evaluation results", "category": "LLM",
         "scope": "global", "formats": [names.MIME_JSON, names.MIME_CSV, names.MIME_JAY]}]
    return results + [
        {"explanation_type": leaderboard, "name": "Leaderboard", "category": "LLM", "scope": "global",
         "formats": [names.MIME_JSON, names.MIME_MARKDOWN, names.MIME_LEADERBOARD_MARKDOWN]},
        {"explanation_type": "global-html-fragment", "name": "Report", "category": "LLM", "scope": "global",
         "formats": [names.MIME_HTML]},
        {"explanation_type": "global-work-dir-archive", "name": "Work directory archive", "category": "LLM",
         "scope": "global", "formats": [names.MIME_ZIP]},
    ]


def descriptor(cls: type[Evaluator], params: JsonObject | None = None,
               thresholds: dict[str, float] | None = None) -> DescriptorJson:
    thresholds = thresholds or {}
    keywords = [f"evaluates_{c}" for c in cls.compatibility]
    keywords += [needed.keyword for needed in cls.required_inputs]
    if cls.requires_judge:
        keywords.append("requires_llm_judge")
    if cls.supports_gpu:
        keywords.append("supports_gpu")
    return {
        "schema_version": names.SCHEMA_VERSION,
        "id": cls.qualified_name(),
        "key": cls.id,
        "name": cls.__name__,
        "display_name": cls.display_name,
        "tagline": cls.tagline,
        "description": f"{cls.description}\n\n{requirements_table(cls)}",
        "brief_description": cls.tagline or cls.description.split("\n")[0],
        "category": cls.category,
        "result_kind": cls.kind.value,
        "model_types": list(cls.compatibility),
        "explanation_scopes": ["global_scope"],
        "explanations": _explanations(cls, params),
        "keywords": keywords,
        "required_inputs": [i.value for i in cls.required_inputs],
        "optional_inputs": [i.value for i in cls.optional_inputs],
        "requires_judge": cls.requires_judge,
        "supports_gpu": cls.supports_gpu,
        "parameters": parameter_entries(cls, params),
        "metrics_meta": cls.metrics_meta(thresholds),
    }
