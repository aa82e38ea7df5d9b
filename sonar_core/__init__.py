"""Sonar core: the evaluator contract, discovery, scoring and the result directory.

Plugins import what they need from here; nothing in this package holds evaluator logic.
"""

from .context import EvaluationContext
from .contract import (
    COMMON_PARAMETERS,
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
    "EvaluationContext",
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
    "run",
    "__version__",
]


def run(*args, **kwargs):
    """Run evaluators over a dataset; see :func:`sonar_core.api.run`."""
    from .api import run as _run  # lazy: importing the package must not load plugins

    return _run(*args, **kwargs)
