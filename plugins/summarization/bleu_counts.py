"""Clipped n-gram matches of a whole batch of (reference, candidate) token lists at once, with numpy.

For each row and each order n = 1..4: the number of the candidate's n-grams that also occur in the
reference, each n-gram counted at most as often as the reference holds it (BLEU's modified
precision numerator; what ``sum(min(hyp[g], ref[g]))`` over Counters gives, integer for integer).

How: every token of the batch gets an integer id (one dict over the batch's distinct tokens); an
n-gram's id is its (n-1)-gram's id times the vocabulary size plus its last token's id, made dense
again with ``np.unique`` so the numbers stay small. Counting (reference, n-gram) and (row, n-gram)
pairs is then two ``np.unique`` calls per order, and the clipped matches of each row one
``searchsorted`` and one ``bincount``: a few sorts of the batch's n-grams instead of four Python
Counters per row. Rows that share a reference (the same list object, as the evaluator's token cache
hands them out) count its n-grams once.
"""

from __future__ import annotations

from itertools import chain
from typing import Sequence

__all__ = ["clipped_matches"]


def _flat(chunks: Sequence[Sequence[str]], np):
    """(owner of each position, tokens from each position to the end of its text), positions in order."""
    lens = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
    owner = np.repeat(np.arange(len(chunks), dtype=np.int64), lens)
    left = np.repeat(np.cumsum(lens), lens) - np.arange(int(lens.sum()), dtype=np.int64)
    return owner, left


def clipped_matches(references: Sequence[list[str]], candidates: Sequence[list[str]],
                    orders: int = 4) -> list[list[int]]:
    """Per row, the clipped matches of the candidate's 1- to ``orders``-grams in its reference."""
    import numpy as np

    rows = len(candidates)
    distinct: dict[int, int] = {}
    ref_lists: list[list[str]] = []
    ref_of_row = np.empty(rows, dtype=np.int64)
    for i, reference in enumerate(references):
        j = distinct.get(id(reference))
        if j is None:
            j = distinct[id(reference)] = len(ref_lists)
            ref_lists.append(reference)
        ref_of_row[i] = j
    # One id per distinct token of the batch (dict.fromkeys keeps first-seen order; all in C).
    tokens = list(chain(chain.from_iterable(ref_lists), chain.from_iterable(candidates)))
    vocab = {token: i for i, token in enumerate(dict.fromkeys(tokens))}
    ids = np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    size = len(vocab) + 1
    ref_owner, ref_left = _flat(ref_lists, np)
    cand_owner, cand_left = _flat(candidates, np)
    split = len(ref_owner)
    ref_ids, cand_ids = ids[:split], ids[split:]
    out = np.zeros((rows, orders), dtype=np.int64)
    ref_gram, cand_gram = ref_ids, cand_ids  # order 1: the token ids are dense already
    grams = size
    for n in range(1, orders + 1):
        ref_valid, cand_valid = ref_left >= n, cand_left >= n
        if n > 1:
            # The n-gram starting at i: its (n-1)-gram and the token at i + n - 1 (same text where valid).
            ref_next = np.zeros_like(ref_ids)
            ref_next[:max(len(ref_ids) - n + 1, 0)] = ref_ids[n - 1:]
            cand_next = np.zeros_like(cand_ids)
            cand_next[:max(len(cand_ids) - n + 1, 0)] = cand_ids[n - 1:]
            keys = np.concatenate([(ref_gram * size + ref_next)[ref_valid], (cand_gram * size + cand_next)[cand_valid]])
            unique, dense = np.unique(keys, return_inverse=True)
            grams = max(len(unique), 1)
            count_ref = int(ref_valid.sum())
            ref_gram = np.zeros_like(ref_ids)
            ref_gram[ref_valid] = dense[:count_ref]
            cand_gram = np.zeros_like(cand_ids)
            cand_gram[cand_valid] = dense[count_ref:]
        # How often each reference holds each n-gram, and each row's candidate.
        ref_pairs, ref_counts = np.unique(ref_owner[ref_valid] * grams + ref_gram[ref_valid], return_counts=True)
        cand_pairs, cand_counts = np.unique(cand_owner[cand_valid] * grams + cand_gram[cand_valid],
                                            return_counts=True)
        if not len(ref_pairs) or not len(cand_pairs):
            continue
        row = cand_pairs // grams
        wanted = ref_of_row[row] * grams + cand_pairs % grams
        at = np.searchsorted(ref_pairs, wanted)
        at[at == len(ref_pairs)] = 0
        hit = ref_pairs[at] == wanted
        clipped = np.minimum(cand_counts[hit], ref_counts[at[hit]])
        out[:, n - 1] = np.bincount(row[hit], weights=clipped, minlength=rows)
    return out.tolist()
