"""Loaders of the language-model family: an ``lmppl.LM`` and a scoring tokenizer around the store's causal LM.

Both share the store's one copy of the causal LM's weights (``store.load_causal_lm``); evaluators
call them through ``ctx.load_model``:

* :func:`load_perplexity_lm` -- an ``lmppl.LM`` (no second copy of the weights, no network check,
  no extra pad token);
* :func:`load_scoring_tokenizer` -- the model and a right-padding tokenizer for batched
  log-likelihoods (GPTScore).

:func:`load_seq2seq_scorer` loads a sequence-to-sequence model (flan-t5, the catalogue's GPTScore choices)
and its tokenizer for GPTScore's encoder-decoder scoring; :func:`is_encoder_decoder` tells the two apart
from the folder's ``config.json`` without loading anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sonar_core import ModelStore

__all__ = ["load_perplexity_lm", "load_scoring_tokenizer", "load_seq2seq_scorer", "is_encoder_decoder",
           "TextOnlyTokenizer"]


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

    return store.load("perplexity_lm", ref, device, build)


def load_scoring_tokenizer(store: ModelStore, ref: str, device: str = "cpu"):
    """``(model, tokenizer)`` of a causal LM for batched log-likelihoods: the shared model and a
    right-padding tokenizer with a pad token (see :func:`_text_tokenizer`), loaded once."""
    model, _ = store.load_causal_lm(ref, device)
    tokenizer = store.load("scoring_tokenizer", ref, device, lambda folder, dev: _text_tokenizer(folder, model))
    return model, tokenizer


def is_encoder_decoder(folder: Path) -> bool:
    """Whether the model saved in ``folder`` is a sequence-to-sequence (encoder-decoder) model, read from
    its ``config.json``; False when there is none (a single-file model is no seq2seq model)."""
    import json

    config = Path(folder) / "config.json"
    try:
        return bool(json.loads(config.read_text(encoding="utf-8")).get("is_encoder_decoder"))
    except (OSError, ValueError, AttributeError):
        return False


def load_seq2seq_scorer(store: ModelStore, ref: str, device: str = "cpu"):
    """``(model, tokenizer)`` of a sequence-to-sequence model (``AutoModelForSeq2SeqLM``), in eval mode,
    loaded once per process from the store's folder of ``ref``."""

    def build(folder: Path, dev: str):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForSeq2SeqLM.from_pretrained(str(folder), local_files_only=True)
        model.to(dev).eval()
        return model, tokenizer

    return store.load("seq2seq_lm", ref, device, build)
