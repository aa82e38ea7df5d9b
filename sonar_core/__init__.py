"""Sonar core: the evaluator contract, discovery, scoring and the result directory.

Plugins import what they need from here; nothing in this package holds evaluator logic.
"""

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
from .dataset import LLMDataset, Row, load_dataset
from .errors import ConfigError, DatasetError, ModelMissingError, PluginError, SonarError
from .hookspecs import hookimpl
from .models import ModelStore, load_sequence_classifier, model_inputs
from .passfail import PassFailEvaluator, Verdict

from .version import __version__

__all__ = [
    "COMMON_PARAMETERS",
    "ConfigError",
    "DatasetError",
    "Difference",
    "EvaluationContext",
    "FALLBACK_DETAIL",
    "Evaluator",
    "Input",
    "LLMDataset",
    "Metric",
    "MetricRole",
    "ModelMissingError",
    "ModelStore",
    "Param",
    "ParameterError",
    "PassFailEvaluator",
    "PluginError",
    "ResultKind",
    "Row",
    "RowResult",
    "SonarError",
    "Table",
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


#: Names served by :mod:`sonar_core.api` on first use: importing the package must not load the run
#: layer (nor plugins); ``sonar_core.run`` is then api.run itself, typed signature and all.
_API = ("run", "open_run", "resume", "RunResult", "generate")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'sonar_core' has no attribute '{name}'")
