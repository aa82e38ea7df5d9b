"""The deterministic steps of the document graph: duplicates, key terms, topics and links.

Every function takes normalised embeddings (a dot product is the cosine similarity) and returns
plain values, computed the same way on every machine: ties are broken by chunk order, clustering
has no random start.

* **Near duplicates** (:func:`near_duplicates`): a chunk whose cosine similarity to an earlier kept
  chunk is at least ``threshold`` is dropped as a copy of it (files copied twice, boilerplate).
* **Key terms** (:func:`key_terms`): each chunk's highest TF-IDF words (three letters or more,
  no digits, common English and German function words left out).
* **Topics** (:func:`topics`): HDBSCAN over the embeddings (scikit-learn; above 2,000 chunks first
  reduced to 32 dimensions by PCA); chunks HDBSCAN calls noise join the nearest topic's centroid;
  a corpus too small to cluster is one topic. Topics are numbered by their first chunk.
* **Links** (:func:`links`): each chunk's ``k`` most similar chunks at cosine ``min_similarity`` or
  more, and pairs sharing at least two key terms; each pair once, with both reasons.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["near_duplicates", "key_terms", "topics", "links", "STOP_WORDS"]

#: Function words left out of key terms (English and German; TF-IDF discounts the rest).
STOP_WORDS = frozenset("""
the and for are but not you all any can had her was one our out has his how its may new now
old see two way who did get let put say she too use that with have this will your from they
been more when what were which their there than then them these those into only other also
some such very just over each most must shall should would could about after before under
where while within without between because being does upon here both either neither per
der die das und oder aber nicht ein eine einer eines einem einen den dem des ist sind war
wird werden wurde mit von vom zum zur bei aus auf für fuer über ueber unter nach vor durch
gegen ohne sich sie ihr ihre ihren ihrem ihres wir uns unser euch dass wenn weil als auch
noch nur schon sehr kann können koennen muss müssen soll sollen darf dürfen hat haben hatte
dieser diese dieses diesem diesen jeder jede jedes alle allen wie was wer wo man sein seine
""".split())


def near_duplicates(vectors: np.ndarray, threshold: float, block: int = 1024) -> dict[int, tuple[int, float]]:
    """Row -> (the earlier kept row it copies, similarity) for every near duplicate; rows in order."""
    n = len(vectors)
    candidates: dict[int, list[tuple[int, float]]] = {}
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = vectors[start:stop] @ vectors[:stop].T
        for offset in range(stop - start):
            row = start + offset
            earlier = sims[offset, :row]
            hits = np.nonzero(earlier >= threshold)[0]
            if len(hits):
                candidates[row] = [(int(j), float(earlier[j])) for j in hits]
    dropped: dict[int, tuple[int, float]] = {}
    for row in sorted(candidates):
        kept = [(j, s) for j, s in candidates[row] if j not in dropped]
        if kept:
            dropped[row] = max(kept, key=lambda pair: (pair[1], -pair[0]))
    return dropped


def key_terms(texts: Sequence[str], per_chunk: int = 8) -> list[list[str]]:
    """The ``per_chunk`` highest TF-IDF terms of each text (ties by the term), lower case."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not texts:
        return []
    vectorizer = TfidfVectorizer(token_pattern=r"(?u)\b[^\W\d_]{3,}\b", lowercase=True, sublinear_tf=True,
                                 stop_words=sorted(STOP_WORDS), max_df=0.5 if len(texts) >= 20 else 1.0,
                                 dtype=np.float64)
    try:
        matrix = vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # no term at all (every text is numbers or stop words)
        return [[] for _ in texts]
    vocabulary = vectorizer.get_feature_names_out()
    terms: list[list[str]] = []
    for row in range(matrix.shape[0]):
        start, stop = matrix.indptr[row], matrix.indptr[row + 1]
        pairs = sorted(zip(matrix.data[start:stop], vocabulary[matrix.indices[start:stop]]),
                       key=lambda pair: (-round(float(pair[0]), 9), str(pair[1])))
        terms.append([str(term) for _, term in pairs[:per_chunk]])
    return terms


def topics(vectors: np.ndarray) -> list[int]:
    """A topic number per row (see the module docstring)."""
    n = len(vectors)
    if n < 6:
        return [0] * n
    from sklearn.cluster import HDBSCAN

    points = vectors.astype(np.float64)
    if n > 2000 and points.shape[1] > 32:
        from sklearn.decomposition import PCA

        points = PCA(n_components=32, svd_solver="covariance_eigh").fit_transform(points)
    size = max(3, min(50, int(round(np.sqrt(n) / 2))))
    labels = HDBSCAN(min_cluster_size=size, min_samples=min(size, 5), copy=True).fit_predict(points)
    clusters = sorted(set(int(label) for label in labels) - {-1})
    if not clusters:
        return [0] * n
    centroids = np.stack([vectors[labels == c].mean(axis=0) for c in clusters])
    assigned = [int(label) for label in labels]
    for row in np.nonzero(labels == -1)[0]:
        assigned[int(row)] = clusters[int(np.argmax(centroids @ vectors[row]))]
    order: dict[int, int] = {}
    for label in assigned:  # numbered by first appearance: the same corpus gives the same numbers
        order.setdefault(label, len(order))
    return [order[label] for label in assigned]


def links(vectors: np.ndarray, terms: Sequence[Sequence[str]], k: int = 5, min_similarity: float = 0.5,
          min_shared: int = 2, block: int = 1024, term_limit: int = 50) -> list[dict]:
    """Links between chunks (row numbers ``a`` < ``b``), with ``similarity`` and ``shared_terms``."""
    n = len(vectors)
    pairs: dict[tuple[int, int], dict] = {}
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = vectors[start:stop] @ vectors.T
        for offset in range(stop - start):
            row = start + offset
            sims[offset, row] = -2.0
            count = min(k, n - 1)
            if count <= 0:
                continue
            best = np.argpartition(-sims[offset], count - 1)[:count]
            for col in sorted(int(c) for c in best):
                if sims[offset, col] >= min_similarity:
                    a, b = min(row, col), max(row, col)
                    pairs[(a, b)] = {"a": a, "b": b}
    postings: dict[str, list[int]] = {}
    for row, chunk_terms in enumerate(terms):
        for term in chunk_terms:
            postings.setdefault(term, []).append(row)
    shared: dict[tuple[int, int], set[str]] = {}
    for term, rows in postings.items():
        if len(rows) > term_limit:  # a term in many chunks links nothing in particular
            continue
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                shared.setdefault((a, b), set()).add(term)
    for pair, words in shared.items():
        if len(words) >= min_shared:
            pairs.setdefault(pair, {"a": pair[0], "b": pair[1]})
    result = []
    for (a, b) in sorted(pairs):
        result.append({"a": a, "b": b, "similarity": round(float(vectors[a] @ vectors[b]), 4),
                       "shared_terms": sorted(shared.get((a, b), ()))})
    return result
