"""The model service: the catalogue of known models, the store that finds and loads them, devices,
preparation, the loaders several evaluator families share, and the run's embedding service.

Modules:

* :mod:`.catalogue` -- the models Sonar knows by name (:data:`KNOWN_MODELS`) and where their files come from;
* :mod:`.locations` -- Sonar's cache folder and the places model files are looked for;
* :mod:`.devices` -- the ``device`` setting made concrete (:func:`pick_device`);
* :mod:`.store` -- :class:`ModelStore` (resolve, status, :meth:`~ModelStore.load`), one per process;
* :mod:`.prepare` -- SmolLM2 prepared once from its GGUF file (:func:`convert_gguf`);
* :mod:`.loaders` -- loaders shared by several families (a loader for one family lives in it);
* :mod:`.embeddings` -- the embedding service (sentence embeddings, each text encoded once per run).

Evaluators reach all of this through their context (``ctx.load_model``, ``ctx.embed``), not by
importing these modules.
"""

from __future__ import annotations

from typing import Any

from ..errors import ModelMissingError
from .known import KNOWN_MODELS, KnownModel, known_model
from .devices import pick_device
from .loaders import load_sequence_classifier, model_inputs
from .locations import sonar_home
from .prepare import convert_gguf
from .store import ModelStatus, ModelStore, get_store

__all__ = [
    "KNOWN_MODELS",
    "KnownModel",
    "known_model",
    "ModelMissingError",
    "ModelStatus",
    "ModelStore",
    "get_store",
    "pick_device",
    "sonar_home",
    "convert_gguf",
    "load_sequence_classifier",
    "model_inputs",
    "EmbeddingService",
    "DEFAULT_EMBEDDING_MODEL",
    "cosine",
    "cosine_matrix",
]

#: Names of :mod:`.embeddings`, imported on first use: that module imports numpy, and importing
#: ``sonar_core`` (which imports this package for the loaders it exports) must stay light.
_EMBEDDING_NAMES = ("EmbeddingService", "DEFAULT_EMBEDDING_MODEL", "cosine", "cosine_matrix")


def __getattr__(name: str) -> Any:
    if name in _EMBEDDING_NAMES:
        from . import embeddings

        return getattr(embeddings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
