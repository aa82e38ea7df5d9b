"""Loader of the robustness family's token encoder (BERTScore's per-token vectors).
Evaluators call it through ``ctx.load_model``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sonar_core import ModelMissingError

if TYPE_CHECKING:  # pragma: no cover
    from sonar_core import ModelStore

__all__ = ["load_token_encoder"]


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

    return store.load("token_encoder", ref, device, load)
