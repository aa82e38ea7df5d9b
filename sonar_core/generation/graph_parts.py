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

from .records import LinkRecord

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
    """Row -> (the earlier kept row it copies, similarity) for every near duplicate; rows in order.

    The similarities are computed a block of rows at a time (a matrix product; ``block`` rows by
    every earlier row), so memory stays at ``block`` x n floats.
    """
    n = len(vectors)
    dropped: dict[int, tuple[int, float]] = {}
    gone = np.zeros(n, dtype=bool)
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = vectors[start:stop] @ vectors[:stop].T
        # Only earlier rows count: column j < row.
        hits = (sims >= threshold) & (np.arange(stop)[None, :] < np.arange(start, stop)[:, None])
        for offset in np.flatnonzero(hits.any(axis=1)).tolist():
            row = start + offset
            # Only kept rows are originals: a row like nothing but dropped rows is kept.
            allowed = hits[offset, :row] & ~gone[:row]
            if allowed.any():
                similar = np.where(allowed, sims[offset, :row], -np.inf)
                original = int(np.argmax(similar))  # the most similar; ties to the earliest
                dropped[row] = (original, float(sims[offset, original]))
                gone[row] = True
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
    # One sort for the whole matrix: by row, then score (rounded, so float noise breaks no tie), then
    # column; scikit-learn numbers its vocabulary in sorted order, so the column order is the terms'.
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    order = np.lexsort((matrix.indices, -np.round(matrix.data, 9), rows))
    rank = np.arange(len(order)) - matrix.indptr[rows[order]]
    top = order[rank < per_chunk]
    terms: list[list[str]] = [[] for _ in range(matrix.shape[0])]
    for row, column in zip(rows[top].tolist(), matrix.indices[top].tolist()):
        terms[row].append(str(vocabulary[column]))
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


def _top_k(sims: np.ndarray, k: int) -> list[np.ndarray]:
    """Per row of ``sims``, the columns of its ``k`` largest values (ties to the lower column), ascending."""
    n = sims.shape[1]
    kth = np.partition(sims, n - k, axis=1)[:, n - k:n - k + 1]  # each row's k-th largest value
    above = sims > kth
    found = []
    for row in range(len(sims)):
        columns = np.flatnonzero(above[row])
        if len(columns) < k:  # fill with the lowest columns holding the k-th value itself
            ties = np.flatnonzero(sims[row] == kth[row, 0])[:k - len(columns)]
            columns = np.sort(np.concatenate([columns, ties]))
        found.append(columns)
    return found


def links(vectors: np.ndarray, terms: Sequence[Sequence[str]], k: int = 5, min_similarity: float = 0.5,
          min_shared: int = 2, block: int = 1024, term_limit: int = 50) -> list[LinkRecord]:
    """Links between chunks (row numbers ``a`` < ``b``), with ``similarity`` and ``shared_terms``.

    Similar pairs come from a block of rows at a time against every row (a matrix product); pairs
    sharing key terms from a sparse product of chunks x terms (terms in at most ``term_limit``
    chunks), so no step walks the pairs in Python.
    """
    from scipy import sparse

    n = len(vectors)
    pairs: set[tuple[int, int]] = set()
    count = min(k, n - 1)
    for start in range(0, n, block if count > 0 else n or 1):
        if count <= 0:
            break
        stop = min(n, start + block)
        sims = vectors[start:stop] @ vectors.T
        sims[np.arange(stop - start), np.arange(start, stop)] = -2.0
        for offset, columns in enumerate(_top_k(sims, count)):
            row = start + offset
            for col in columns[sims[offset, columns] >= min_similarity].tolist():
                pairs.add((min(row, col), max(row, col)))
    postings: dict[str, list[int]] = {}
    for row, chunk_terms in enumerate(terms):
        for term in chunk_terms:
            postings.setdefault(term, []).append(row)
    linking = {term for term, rows in postings.items() if len(rows) <= term_limit}  # a common term links nothing
    columns = {term: number for number, term in enumerate(sorted(linking))}
    entries = [(row, columns[term]) for row, chunk_terms in enumerate(terms) for term in set(chunk_terms)
               if term in columns]
    if entries and n:
        rows, cols = zip(*entries)
        incidence = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n, len(columns)))
        shared_counts = sparse.triu(incidence @ incidence.T, k=1).tocoo()
        keep = shared_counts.data >= min_shared
        pairs.update(zip(shared_counts.row[keep].tolist(), shared_counts.col[keep].tolist()))
    result: list[LinkRecord] = []
    for a, b in sorted(pairs):
        result.append({"a": a, "b": b, "similarity": round(float(vectors[a] @ vectors[b]), 4),
                       "shared_terms": sorted(linking.intersection(terms[a]).intersection(terms[b]))})
    return result
