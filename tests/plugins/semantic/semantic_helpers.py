"""Shared by the semantic evaluator tests: rows, evaluators on one context, and the model's own vectors."""

from __future__ import annotations

import numpy as np

from sonar_core import EvaluationContext
from sonar_core.models import DEFAULT_EMBEDDING_MODEL, get_store
from sonar_core.testing import make_row

#: Float rounding between a batched and a separate encode of the same text stays far below this.
TOLERANCE = 1e-5


def row(model: str = "m1", case: str = "tc1", **fields):
    return make_row(key=f"{case}-{model}", model_key=model, test_case_key=case, **fields)


def evaluator(cls, ctx: EvaluationContext, **params):
    return cls(cls.validate_params(params), ctx)


def model_vectors(*texts: str) -> np.ndarray:
    """Normalised vectors straight from the store's SentenceTransformer, not through the service."""
    encoder = get_store().load_sentence_transformer(DEFAULT_EMBEDDING_MODEL, "cpu")
    return encoder.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True)


def cosine(a: str, b: str) -> float:
    """The model's cosine similarity of two texts, clipped to [0, 1] as the evaluators document."""
    va, vb = model_vectors(a, b)
    return float(np.clip(np.dot(va, vb), 0.0, 1.0))
