"""Token log-likelihoods of texts under a causal LM, in batched forward passes.

GPTScore scores a target text by the average negative log-likelihood (ANLL) of its tokens
after a prompt. Pairs are sorted by length and packed into batches under a token budget, so
padding stays small and memory bounded; right padding keeps each row's positions as if it
were alone. Only the target positions go through the output layer: for a 49k-token vocabulary
that is most of the cost of the logits.

A sequence-to-sequence model (flan-t5) is scored as the GPTScore paper's code scores it (after
BARTScore): the prompt is the encoder's input, the target the decoder's labels, both tokenised as the
model's tokenizer does by default (T5 ends each with ``</s>``), and the score is the decoder's mean
negative log-likelihood of the target's tokens, end-of-sequence token included.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

__all__ = ["mean_target_nll", "seq2seq_target_nll", "length_batches", "MAX_BATCH_TOKENS", "MAX_BATCH_ROWS"]

#: Padded tokens (rows x longest row) per forward pass: bounds activation memory.
MAX_BATCH_TOKENS = 4096
MAX_BATCH_ROWS = 32


def length_batches(lengths: Sequence[int], max_tokens: int = MAX_BATCH_TOKENS,
                   max_rows: int = MAX_BATCH_ROWS) -> Iterator[list[int]]:
    """Indices of ``lengths`` grouped into batches, shortest first, each within the budgets."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batch: list[int] = []
    for index in order:
        longest = max(lengths[index], 1)  # sorted: the newcomer is the longest so far
        if batch and ((len(batch) + 1) * longest > max_tokens or len(batch) >= max_rows):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def _logits_are_projection(model: Any) -> bool:
    """True when logits are the output layer applied to the last hidden state, nothing more."""
    config = model.config
    return (model.get_output_embeddings() is not None
            and not getattr(config, "final_logit_softcapping", None)
            and getattr(config, "logit_scale", None) in (None, 1, 1.0))


def mean_target_nll(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> list[float | None]:
    """ANLL (natural log, per token) of each target given its prefix: ``-mean(log p(t_i | prefix, t_<i))``.

    Prefix and target are tokenised separately without special tokens and joined, so the target's
    tokens are exactly its own. A prefix too long for the model loses its start. A target with no
    token (empty text) gets None.
    """
    import torch

    limit = int(getattr(tokenizer, "model_max_length", 0) or 0) or 1_000_000
    prefixes = tokenizer([p for p, _ in pairs], add_special_tokens=False)["input_ids"] if pairs else []
    targets = tokenizer([t for _, t in pairs], add_special_tokens=False)["input_ids"] if pairs else []
    sequences: list[list[int]] = []
    starts: list[int] = []
    for prefix, target in zip(prefixes, targets):
        target = target[: limit - 1]
        prefix = prefix[max(0, len(prefix) + len(target) - limit):]
        if not prefix:  # the first token has no context to be predicted from
            prefix, target = target[:1], target[1:]
        sequences.append(prefix + target)
        starts.append(len(prefix))
    results: list[float | None] = [None] * len(pairs)
    device = model.device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    projection = _logits_are_projection(model)
    with torch.inference_mode():
        for batch in length_batches([len(s) for s in sequences]):
            width = max(len(sequences[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            rows, positions, labels = [], [], []
            for r, i in enumerate(batch):
                seq = sequences[i]
                ids[r, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                mask[r, : len(seq)] = 1
                # The token at position p is predicted by the hidden state at p - 1.
                for p in range(starts[i], len(seq)):
                    rows.append(r)
                    positions.append(p - 1)
                    labels.append(seq[p])
            if not labels:
                continue
            ids, mask = ids.to(device), mask.to(device)
            rows_t = torch.tensor(rows, device=device)
            positions_t = torch.tensor(positions, device=device)
            if projection:
                hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
                logits = model.get_output_embeddings()(hidden[rows_t, positions_t])
            else:
                logits = model(input_ids=ids, attention_mask=mask).logits[rows_t, positions_t]
            nll = -torch.log_softmax(logits.float(), dim=-1).gather(
                1, torch.tensor(labels, device=device).unsqueeze(1)).squeeze(1)
            sums = torch.zeros(len(batch), dtype=torch.float64, device=device).index_add_(0, rows_t, nll.double())
            counts = torch.bincount(rows_t, minlength=len(batch))
            for r, i in enumerate(batch):
                if counts[r] > 0:
                    value = float(sums[r] / counts[r])
                    results[i] = value if math.isfinite(value) else None
    return results


def seq2seq_target_nll(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> list[float | None]:
    """ANLL (natural log, per token) of each target given its prefix under an encoder-decoder model:
    ``-mean(log p(t_i | prefix, t_<i))`` over the target's tokens as the tokenizer writes them (with its
    end-of-sequence token). Prefixes and targets too long for the model lose their end; a target with no
    token gets None."""
    import torch

    limit = int(getattr(tokenizer, "model_max_length", 0) or 0)
    limit = limit if 0 < limit < 100_000 else 512  # T5 tokenizers report no real limit
    sources = tokenizer([p for p, _ in pairs], truncation=True, max_length=limit)["input_ids"] if pairs else []
    targets = tokenizer([t.strip() for _, t in pairs], truncation=True, max_length=limit)["input_ids"] if pairs else []
    results: list[float | None] = [None] * len(pairs)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = model.device
    with torch.inference_mode():
        lengths = [len(s) + len(t) for s, t in zip(sources, targets)]
        for batch in length_batches(lengths):
            batch = [i for i in batch if targets[i]]
            if not batch:
                continue
            src_width = max(len(sources[i]) for i in batch)
            tgt_width = max(len(targets[i]) for i in batch)
            ids = torch.full((len(batch), src_width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), src_width), dtype=torch.long)
            labels = torch.full((len(batch), tgt_width), -100, dtype=torch.long)  # -100: no token here
            for r, i in enumerate(batch):
                ids[r, : len(sources[i])] = torch.tensor(sources[i], dtype=torch.long)
                mask[r, : len(sources[i])] = 1
                labels[r, : len(targets[i])] = torch.tensor(targets[i], dtype=torch.long)
            # The model shifts the labels right (decoder start token first) to make the decoder's input.
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device)).logits
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            labels = labels.to(device)
            present = labels != -100
            picked = logprobs.gather(2, labels.clamp(min=0).unsqueeze(2)).squeeze(2) * present
            sums, counts = picked.double().sum(dim=1), present.sum(dim=1)
            for r, i in enumerate(batch):
                value = float(-sums[r] / counts[r])
                results[i] = value if math.isfinite(value) else None
    return results
