"""Sonar core: the evaluator contract, discovery, scoring and the result directory.

This package's top level is the one face a plugin imports (docs/plugin-authoring.md): every name a
plugin needs is importable from ``sonar_core`` itself, and a plugin imports no ``sonar_core.<module>``
(tests/core/test_plugin_face.py holds the built-in plugins to it). Nothing in this package holds
evaluator logic.
"""

from typing import TYPE_CHECKING

from .context import EvaluationContext
from .contract import (
    COMMON_PARAMETERS,
    FALLBACK_DETAIL,
    Difference,
    Evaluator,
    Input,
    Metric,
    MetricRole,
    Param,
    ParameterError,
    ResultKind,
    RowResult,
    Table,
)
from .conversation import ToolCall, Turn
from .dataset import LLMDataset, Row, load_dataset
from .errors import ConfigError, DatasetError, ModelMissingError, PluginError, SonarError
from .evaluator_shapes import ExtraInsight, ExtraProblem, MetricMeta, OutputMeta, SentenceScore
from .hookspecs import hookimpl
from .jsontypes import JsonObject, JsonValue
from .models import ModelStore, load_sequence_classifier, model_inputs
from .params import ParamValues
from .passfail import PassFailEvaluator, Verdict

from .version import __version__

if TYPE_CHECKING:  # pragma: no cover - the lazy names below, spelled out for type checkers and readers
    from .api import generate, resume, run
    from .results import RunResult, open_run
    from .benchmarks import BenchmarkDefinition
    from .hosts import Host, HostAnswer
    from .judge_evaluator import (ANSWER_LIMIT, JUDGE_AGREEMENT, JUDGE_CONFIDENCE, JUDGE_KEY_PARAM, JudgeEvaluator, JudgeVote,
                          judge_metrics, keyword_vote, placeholders_in, render_prompt)
    from .llm import LLMClient, LLMRequest
    from .perturbations import Perturbator, derive_seed, get_perturbator, make_perturbator
    from .perturbations.obfuscations import HOMOGLYPHS
    from .perturbations.registry import ALIASES as PERTURBATOR_ALIASES
    from .redteam import AttackSet, Technique

__all__ = [
    "COMMON_PARAMETERS",
    "ConfigError",
    "DatasetError",
    "Difference",
    "EvaluationContext",
    "FALLBACK_DETAIL",
    "Evaluator",
    "ExtraInsight",
    "ExtraProblem",
    "Input",
    "JsonObject",
    "JsonValue",
    "LLMDataset",
    "Metric",
    "MetricMeta",
    "MetricRole",
    "ModelMissingError",
    "ModelStore",
    "OutputMeta",
    "Param",
    "ParamValues",
    "ParameterError",
    "PassFailEvaluator",
    "PluginError",
    "ResultKind",
    "Row",
    "RowResult",
    "SentenceScore",
    "SonarError",
    "Table",
    "ToolCall",
    "Turn",
    "Verdict",
    "hookimpl",
    "load_dataset",
    "load_sequence_classifier",
    "model_inputs",
    "open_run",
    "run",
    "generate",
    "__version__",
]


#: Names served on first use, by the module that defines them: importing the package must not load
#: the run layer (nor plugins), nor the LLM client and its HTTP stack, nor the perturbators, for a
#: plugin that asks none of them. ``sonar_core.run`` is then api.run itself, typed signature and all.
_LAZY: dict[str, tuple[str, str]] = {
    **{name: ("api", name) for name in ("run", "resume", "generate")},
    **{name: ("results", name) for name in ("open_run", "RunResult")},  # reading a folder loads no run layer
    **{name: ("judge_evaluator", name) for name in ("JudgeEvaluator", "JudgeVote", "judge_metrics", "keyword_vote",
                                            "placeholders_in", "render_prompt", "JUDGE_AGREEMENT", "JUDGE_CONFIDENCE",
                                            "JUDGE_KEY_PARAM", "ANSWER_LIMIT")},
    "LLMClient": ("llm", "LLMClient"),
    "LLMRequest": ("llm", "LLMRequest"),
    **{name: ("perturbations", name) for name in ("Perturbator", "derive_seed", "get_perturbator",
                                                  "make_perturbator")},
    "PERTURBATOR_ALIASES": ("perturbations.registry", "ALIASES"),
    "HOMOGLYPHS": ("perturbations.obfuscations", "HOMOGLYPHS"),
    "Technique": ("redteam", "Technique"),
    "AttackSet": ("redteam", "AttackSet"),
    "BenchmarkDefinition": ("benchmarks", "BenchmarkDefinition"),
    "Host": ("hosts", "Host"),
    "HostAnswer": ("hosts", "HostAnswer"),
}


__all__ += sorted(name for name in _LAZY if name not in __all__)


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        module, attribute = _LAZY[name]
        return getattr(import_module(f".{module}", __name__), attribute)
    raise AttributeError(f"module 'sonar_core' has no attribute '{name}'")
