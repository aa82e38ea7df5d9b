"""Loaders shared by more than one evaluator family, on top of the store's :meth:`~.store.ModelStore.load`.

A loader takes ``(store, ref, device, **options)``, resolves ``ref`` through the store (a missing
model is the store's one-line :class:`~sonar_core.errors.ModelMissingError`) and builds the model
once per process and device, so every evaluator of a run shares one copy. Evaluators call one
through :meth:`EvaluationContext.load_model <sonar_core.context.EvaluationContext.load_model>`.
A loader that serves a single family lives in that family's plugin package.

* :func:`load_sequence_classifier` -- a transformers sequence classifier and its tokenizer (bias
  detection, HHEM, NLI models);
* :func:`model_inputs` -- the tokenizer outputs a model's ``forward`` accepts, on its device.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ModelMissingError
from .store import ModelStore

if TYPE_CHECKING:
    import torch

__all__ = ["load_sequence_classifier", "model_inputs"]


def load_sequence_classifier(store: ModelStore, ref: str, device: str = "cpu", *, trust_remote_code: bool = False):
    """``(model, tokenizer)`` of a sequence classifier folder, in eval mode, loaded once.

    ``trust_remote_code`` runs the model folder's own modelling code (HHEM ships its classifier as
    code); it is only ever set for a model the evaluator names.
    """

    def load(folder: Path, dev: str):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if not (folder / "config.json").is_file():
            raise ModelMissingError(f"model '{ref}': {folder} holds no config.json (not a Hugging Face model folder)")
        try:
            model = AutoModelForSequenceClassification.from_pretrained(
                str(folder), local_files_only=True, trust_remote_code=trust_remote_code)
        except OSError as exc:
            # e.g. a folder with TensorFlow weights only, or custom code needing a model not cached.
            reason = (str(exc).strip().splitlines() or ["cannot be loaded"])[0]
            raise ModelMissingError(f"model '{ref}' ({folder}) cannot be loaded offline: {reason}") from None
        model.to(dev).eval()
        tokenizer = None
        if not hasattr(model, "predict"):  # HHEM's custom class brings its own tokenizer
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        return model, tokenizer

    return store.load("classifier", ref, device, load)


def model_inputs(model: Any, encoded: Any) -> dict[str, torch.Tensor]:
    """The tokenizer outputs ``model.forward`` accepts, moved to the model's device.

    A tokenizer may return inputs its model has no use for (a BERT tokenizer's ``token_type_ids``
    for a DistilBERT classifier).
    """
    accepted = inspect.signature(model.forward).parameters
    return {key: value.to(model.device) for key, value in encoded.items() if key in accepted}
