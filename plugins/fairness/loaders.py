"""Loaders of the fairness family's toxicity models: detoxify and alt-profanity-check.

* :func:`load_detoxify` -- a ``detoxify.Detoxify`` from a detoxify checkpoint file or a Hugging
  Face folder of the same model (``unitary/toxic-bert``);
* :func:`load_profanity_model` -- alt-profanity-check's TF-IDF vectorizer and linear model.

Evaluators call them through ``ctx.load_model``; each model is built once per process.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from sonar_core import ModelMissingError

if TYPE_CHECKING:  # pragma: no cover
    from sonar_core import ModelStore

__all__ = ["load_detoxify", "load_profanity_model", "ProfanityModel", "DETOXIFY_RENAMES"]

#: detoxify's own renaming of Jigsaw class names (detoxify.detoxify.load_checkpoint).
DETOXIFY_RENAMES = {"toxic": "toxicity", "identity_hate": "identity_attack", "severe_toxic": "severe_toxicity"}


class ProfanityModel:
    """alt-profanity-check's model: the probability that each text is offensive."""

    def __init__(self, vectorizer: Any, classifier: Any) -> None:
        self.vectorizer = vectorizer
        self.classifier = classifier

    def predict_prob(self, texts: Sequence[str]) -> list[float]:
        """Probability (in [0, 1]) that each text is offensive, in order."""
        if not texts:
            return []
        return [float(p) for p in self.classifier.predict_proba(self.vectorizer.transform(list(texts)))[:, 1]]


def load_profanity_model(store: ModelStore, ref: str = "alt-profanity-check", device: str = "cpu") -> ProfanityModel:
    """alt-profanity-check's vectorizer and classifier from the resolved folder, loaded once.

    The files are read directly: importing ``profanity_check`` would load them at import time.
    ``device`` is accepted like every loader's and not used: a scikit-learn model runs on the CPU.
    """

    def load(folder: Path, dev: str) -> ProfanityModel:
        import joblib

        vectorizer_file, model_file = folder / "vectorizer.joblib", folder / "model.joblib"
        if not (vectorizer_file.is_file() and model_file.is_file()):
            raise ModelMissingError(f"model '{ref}': {folder} holds no vectorizer.joblib and model.joblib")
        with warnings.catch_warnings():
            # The pickles name the scikit-learn version they were made with; the package pins it.
            warnings.simplefilter("ignore")
            return ProfanityModel(joblib.load(vectorizer_file), joblib.load(model_file))

    return store.load("profanity", ref, "cpu", load)


def load_detoxify(store: ModelStore, ref: str, device: str = "cpu"):
    """A ``detoxify.Detoxify`` for ``ref``, loaded once.

    ``ref`` resolves to a detoxify checkpoint file (``.ckpt``: its config and state dict, with the
    base model it names, e.g. ``bert-base-uncased``, resolved through the store for its config and
    tokenizer) or to a Hugging Face folder of such a classifier (``unitary/toxic-bert``).
    """

    def load(path: Path, dev: str):
        from detoxify import Detoxify

        if path.is_file():
            model, tokenizer, classes = _detoxify_checkpoint(store, path, dev)
        else:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            classes = [model.config.id2label[i] for i in range(model.config.num_labels)]
        detox = Detoxify.__new__(Detoxify)  # its constructor would download the checkpoint
        detox.model = model.to(dev).eval()
        detox.tokenizer = tokenizer
        detox.class_names = [DETOXIFY_RENAMES.get(name, name) for name in classes]
        detox.device = dev
        return detox

    return store.load("detoxify", ref, device, load)


def _detoxify_checkpoint(store: ModelStore, path: Path, device: str):
    import torch
    from detoxify.detoxify import get_model_and_tokenizer

    loaded = torch.load(str(path), map_location=device, weights_only=False)
    if not isinstance(loaded, dict) or "config" not in loaded or "state_dict" not in loaded:
        raise ModelMissingError(f"{path}: not a detoxify checkpoint (it needs 'config' and 'state_dict')")
    args = dict(loaded["config"]["arch"]["args"])
    try:
        base = store.resolve(args["model_type"])
    except ModelMissingError as exc:
        raise ModelMissingError(f"detoxify checkpoint {path.name} needs its base model's config and tokenizer: "
                                f"{exc}") from None
    args["model_type"] = str(base)
    model, tokenizer = get_model_and_tokenizer(**args, state_dict=loaded["state_dict"])
    return model, tokenizer, list(loaded["config"]["dataset"]["args"]["classes"])
