"""Loaders for the model kinds of the local-model evaluators, on top of the model store.

Each loader resolves its reference through the store (a missing model is the store's one-line
:class:`~sonar_core.model_store.ModelMissingError`) and builds the model once per process and
device (the store's cache), so every evaluator of a run shares one copy:

* :func:`load_sequence_classifier` -- a transformers sequence classifier and its tokenizer (bias
  detection, HHEM, NLI models);
* :func:`load_perplexity_lm` -- an ``lmppl.LM`` around the store's causal LM (no second copy of
  the weights, no network check, no extra pad token);
* :func:`load_profanity_model` -- alt-profanity-check's TF-IDF vectorizer and linear model;
* :func:`load_detoxify` -- a ``detoxify.Detoxify`` from a detoxify checkpoint file or a Hugging
  Face folder of the same model (``unitary/toxic-bert``);
* :func:`load_summac_conv` -- SummaC Conv's trained weights (a state dict of two linear layers);
* :func:`load_token_encoder` -- a transformer encoder and its tokenizer, for per-token vectors
  (BERTScore); a sentence-transformers folder such as the embedded MiniLM loads as its encoder.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

from .model_store import ModelMissingError, ModelStore

__all__ = [
    "load_sequence_classifier",
    "load_perplexity_lm",
    "load_profanity_model",
    "load_detoxify",
    "load_summac_conv",
    "load_token_encoder",
    "ProfanityModel",
    "TextOnlyTokenizer",
    "DETOXIFY_RENAMES",
    "model_inputs",
]

#: detoxify's own renaming of Jigsaw class names (detoxify.detoxify.load_checkpoint).
DETOXIFY_RENAMES = {"toxic": "toxicity", "identity_hate": "identity_attack", "severe_toxic": "severe_toxicity"}


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

    return store._load("classifier", ref, device, load)


def model_inputs(model: Any, encoded: Any) -> dict[str, Any]:
    """The tokenizer outputs ``model.forward`` accepts, moved to the model's device.

    A tokenizer may return inputs its model has no use for (a BERT tokenizer's ``token_type_ids``
    for a DistilBERT classifier).
    """
    import inspect

    accepted = inspect.signature(model.forward).parameters
    return {key: value.to(model.device) for key, value in encoded.items() if key in accepted}


class TextOnlyTokenizer:
    """A tokenizer proxy that never adds special tokens.

    lmppl calls ``tokenizer(texts, ...)`` itself; the converted SmolLM2 tokenizer would put
    ``<|im_start|>`` in front of every text, so the proxy scores exactly the text's own tokens,
    like GPT-2's tokenizer does by default.
    """

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def __call__(self, *args: Any, **kwargs: Any):
        kwargs["add_special_tokens"] = False
        return self._tokenizer(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)


def _text_tokenizer(folder: Path, model: Any):
    """A fresh tokenizer for batched scoring: right padding, a pad token, a bounded length."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    # Right padding: real tokens never attend to pads and keep their positions, so a padded row
    # scores as it would alone.
    tokenizer.padding_side = "right"
    if tokenizer.pad_token is None:
        # Reuse an existing token rather than add one: adding would resize the shared model.
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    if limit:
        tokenizer.model_max_length = min(int(tokenizer.model_max_length), int(limit))
    return tokenizer


def _no_progress_bar(iterable, *args: Any, **kwargs: Any):
    return iterable


def load_perplexity_lm(store: ModelStore, ref: str, device: str = "cpu"):
    """An ``lmppl.LM`` scoring with the store's causal LM ``ref`` (shared weights), loaded once.

    lmppl's constructor would load a second copy of the model, probe the internet and add a pad
    token (resizing the embeddings of the model every other evaluator shares); this builds the
    same object around the store's model instead.
    """
    model, _ = store.load_causal_lm(ref, device)

    def build(folder: Path, dev: str):
        import lmppl
        import lmppl.ppl_recurrent_lm
        import torch

        # lmppl wraps its batch loop in a tqdm bar; the run has its own progress display.
        lmppl.ppl_recurrent_lm.tqdm = _no_progress_bar

        lm = lmppl.LM.__new__(lmppl.LM)
        lm.tokenizer = TextOnlyTokenizer(_text_tokenizer(folder, model))
        lm.config = model.config
        lm.model = model
        lm.pad_token_initialized = False
        lm.max_length = None
        lm.loss_fct = torch.nn.CrossEntropyLoss(reduction="none")
        lm.device = model.device
        return lm

    return store._load("perplexity_lm", ref, device, build)


def load_scoring_tokenizer(store: ModelStore, ref: str, device: str = "cpu"):
    """``(model, tokenizer)`` of a causal LM for batched log-likelihoods: the shared model and a
    right-padding tokenizer with a pad token (see :func:`_text_tokenizer`), loaded once."""
    model, _ = store.load_causal_lm(ref, device)
    tokenizer = store._load("scoring_tokenizer", ref, device, lambda folder, dev: _text_tokenizer(folder, model))
    return model, tokenizer


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


def load_profanity_model(store: ModelStore, ref: str = "alt-profanity-check") -> ProfanityModel:
    """alt-profanity-check's vectorizer and classifier from the resolved folder, loaded once.

    The files are read directly: importing ``profanity_check`` would load them at import time.
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

    return store._load("profanity", ref, "cpu", load)


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

    return store._load("detoxify", ref, device, load)


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


def load_summac_conv(store: ModelStore, ref: str, device: str = "cpu") -> dict[str, Any]:
    """SummaC Conv's weights as float tensors: ``mlp.weight`` (1, bins), ``mlp.bias`` (1,),
    ``layer_final.weight`` (2, 3) and ``layer_final.bias`` (2,), loaded once."""

    def load(path: Path, dev: str) -> dict[str, Any]:
        import torch

        if not path.is_file():
            raise ModelMissingError(f"model '{ref}': {path} is a folder, not SummaC Conv's weight file")
        state = torch.load(str(path), map_location=dev, weights_only=True)
        needed = ("mlp.weight", "mlp.bias", "layer_final.weight", "layer_final.bias")
        if not isinstance(state, dict) or any(key not in state for key in needed):
            raise ModelMissingError(f"{path}: not SummaC Conv weights (it needs {', '.join(needed)})")
        return {key: state[key].float() for key in needed}

    return store._load("summac_conv", ref, device, load)


def load_token_encoder(store: ModelStore, ref: str, device: str = "cpu"):
    """``(model, tokenizer)`` of a transformer encoder folder (``AutoModel``), in eval mode, loaded once.

    The model's hidden states are per-token vectors; a sentence-transformers folder (config.json and
    weights at its top) gives its underlying encoder, without the pooling layer.
    """

    def load(folder: Path, dev: str):
        from transformers import AutoModel, AutoTokenizer

        if not (folder / "config.json").is_file():
            raise ModelMissingError(f"model '{ref}': {folder} holds no config.json (not a Hugging Face model folder)")
        try:
            model = AutoModel.from_pretrained(str(folder), local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError) as exc:
            reason = (str(exc).strip().splitlines() or ["cannot be loaded"])[0]
            raise ModelMissingError(f"model '{ref}' ({folder}) cannot be loaded offline: {reason}") from None
        model.to(dev).eval()
        return model, tokenizer

    return store._load("token_encoder", ref, device, load)
