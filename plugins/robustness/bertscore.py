"""BERTScore F1 from a transformer's token vectors, computed as the ``bert_score`` package does
(``idf=False``, no baseline rescaling), which Hugging Face ``evaluate``'s ``bertscore`` (used by fmeval) wraps.

Each text is tokenised with the tokenizer's special tokens (``[CLS]``/``[SEP]``) and truncated to the
model's length; its vectors are the hidden states of one layer, L2-normalised. Greedy matching pairs
every candidate token with its most similar reference token (precision) and every reference token with
its most similar candidate token (recall); special tokens can be matched but carry no weight in either
mean, as in ``bert_score`` (its idf weights are 0 for them). F1 = 2PR / (P + R); a text with no
non-special token scores 0 (``bert_score``'s rule for empty texts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["TokenVectors", "encode_tokens", "bertscore"]

_BATCH = 16


@dataclass(frozen=True)
class TokenVectors:
    """One text's token vectors (n, d), L2-normalised, and each token's weight (1, or 0 for special tokens)."""

    vectors: np.ndarray
    weights: np.ndarray


def encode_tokens(model: Any, tokenizer: Any, texts: Sequence[str], layer: int = -1,
                  device: str = "cpu") -> list[TokenVectors]:
    """Token vectors of each text from hidden state ``layer`` (-1: the last layer; 0: the embeddings)."""
    import numpy as np
    import torch

    limit = min(int(tokenizer.model_max_length or 512), int(getattr(model.config, "max_position_embeddings", 512)))
    # Similar lengths in a batch waste less padding; results go back to the caller's order.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    found: list[TokenVectors | None] = [None] * len(texts)
    with torch.inference_mode():
        for start in range(0, len(order), _BATCH):
            chunk = order[start:start + _BATCH]
            encoded = tokenizer([texts[i].strip() for i in chunk], padding=True, truncation=True, max_length=limit,
                                return_special_tokens_mask=True, return_tensors="pt")
            special = encoded.pop("special_tokens_mask")
            inputs = {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask",
                                                                           "token_type_ids")}
            states = model(**inputs, output_hidden_states=True).hidden_states[layer].float().cpu().numpy()
            mask = encoded["attention_mask"].numpy().astype(bool)
            for row, index in enumerate(chunk):
                vectors = states[row][mask[row]].astype(np.float64)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                weights = 1.0 - special[row].numpy()[mask[row]].astype(np.float64)
                found[index] = TokenVectors(vectors, weights)
    return found  # type: ignore[return-value]


def bertscore(reference: TokenVectors, candidate: TokenVectors) -> tuple[float, float, float]:
    """(precision, recall, F1) of ``candidate`` against ``reference``."""
    if reference.weights.sum() == 0 or candidate.weights.sum() == 0:
        return 0.0, 0.0, 0.0
    similarity = candidate.vectors @ reference.vectors.T
    precision = float((similarity.max(axis=1) * candidate.weights).sum() / candidate.weights.sum())
    recall = float((similarity.max(axis=0) * reference.weights).sum() / reference.weights.sum())
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)
