"""Clipped n-gram matches of a whole batch of (reference, candidate) token lists at once, with numpy.

For each row and each order n = 1..4: the number of the candidate's n-grams that also occur in the
reference, each n-gram counted at most as often as the reference holds it (BLEU's modified
precision numerator; what ``sum(min(hyp[g], ref[g]))`` over Counters gives, integer for integer).

How: every token of the batch gets an integer id (one dict over the batch's distinct tokens); an
n-gram's id is its (n-1)-gram's id times the vocabulary size plus its last token's id (exact: the
(n-1)-gram ids are renumbered densely with ``np.unique`` first whenever the product could leave
int64). Counting (reference, n-gram) and (row, n-gram)
pairs is then two ``np.unique`` calls per order, and the clipped matches of each row one
``searchsorted`` and one ``bincount``: a few sorts of the batch's n-grams instead of four Python
Counters per row. Rows that share a reference (the same list object, as the evaluator's token cache
hands them out) count its n-grams once.
"""

from __future__ import annotations

from itertools import chain
from typing import Sequence

__all__ = ["clipped_matches"]

#: (owner, n-gram) pairs are numbered owner * grams + gram in int64: kept below this.
_ID_LIMIT = 2 ** 62


def _flat(chunks: Sequence[Sequence[str]], np):
    """(owner of each position, tokens from each position to the end of its text), positions in order."""
    lens = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
    owner = np.repeat(np.arange(len(chunks), dtype=np.int64), lens)
    left = np.repeat(np.cumsum(lens), lens) - np.arange(int(lens.sum()), dtype=np.int64)
    return owner, left


def _counted(reference: list[str], candidate: list[str], orders: int) -> list[int]:
    """One row's clipped matches with Counters (the batch's ids could leave int64)."""
    from collections import Counter

    out = []
    for n in range(1, orders + 1):
        hyp, ref = (Counter(zip(*(tokens[i:] for i in range(n)))) for tokens in (candidate, reference))
        out.append(sum(min(count, ref[gram]) for gram, count in hyp.items()))
    return out


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
    if max(len(references), rows, 1) * (len(tokens) + 1) ** 2 >= _ID_LIMIT:  # beyond any real batch: Counters
        return [_counted(reference, candidate, orders) for reference, candidate in zip(references, candidates)]
    ref_owner, ref_left = _flat(ref_lists, np)
    cand_owner, cand_left = _flat(candidates, np)
    split = len(ref_owner)
    ref_ids, cand_ids = ids[:split], ids[split:]
    out = np.zeros((rows, orders), dtype=np.int64)
    ref_gram, cand_gram = ref_ids, cand_ids  # order 1: the token ids, below ``size``
    grams = size  # every n-gram id of this order is below it
    owners = max(len(ref_lists), rows, 1)
    for n in range(1, orders + 1):
        ref_valid, cand_valid = ref_left >= n, cand_left >= n
        if n > 1:
            if owners * grams * size >= _ID_LIMIT:
                # Renumber the (n-1)-grams densely (sorted order) before the ids could overflow.
                count_ref = int(ref_valid.sum())
                unique, dense = np.unique(np.concatenate([ref_gram[ref_valid], cand_gram[cand_valid]]),
                                          return_inverse=True)
                ref_gram, cand_gram = ref_gram.copy(), cand_gram.copy()
                ref_gram[ref_valid], cand_gram[cand_valid] = dense[:count_ref], dense[count_ref:]
                grams = max(len(unique), 1)
            # The n-gram starting at i: its (n-1)-gram and the token at i + n - 1 (same text where valid).
            ref_next = np.zeros_like(ref_ids)
            ref_next[:max(len(ref_ids) - n + 1, 0)] = ref_ids[n - 1:]
            cand_next = np.zeros_like(cand_ids)
            cand_next[:max(len(cand_ids) - n + 1, 0)] = cand_ids[n - 1:]
            ref_gram, cand_gram = ref_gram * size + ref_next, cand_gram * size + cand_next
            grams *= size
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
