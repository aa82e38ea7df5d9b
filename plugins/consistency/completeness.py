"""Geometric completeness of a summary: how much of the text's spread its sentences cover.

Context (text) and summary sentence embeddings are reduced with UMAP fitted on the context
sentences (5 dimensions when there are enough of them). Each summary point snaps to its nearest
context point when it lies within the median context-to-context distance, and is dropped
otherwise (so ungrounded sentences add nothing and the ratio cannot pass 1). Completeness is the
"three segment distance" of the kept points over that of all context points: the longest
segment between two points plus, from each of its two ends, the longest further segment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["three_segment_distance", "snap_to_context", "completeness", "reduce"]

#: UMAP needs a few points to build its neighbour graph; fewer context sentences are compared as they are.
MIN_POINTS_FOR_UMAP = 6
UMAP_DIMENSIONS = 5


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1))


def three_segment_distance(points: np.ndarray) -> float:
    """Longest segment |ab| plus the longest segment from a and the longest from b to other points."""
    import numpy as np

    if len(points) < 2:
        return 0.0
    d = _distances(points, points)
    a, b = np.unravel_index(np.argmax(d), d.shape)
    others = [i for i in range(len(points)) if i not in (a, b)]
    extra = (max(d[a, others]) + max(d[b, others])) if others else 0.0
    return float(d[a, b] + extra)


def snap_to_context(summary: np.ndarray, context: np.ndarray) -> np.ndarray:
    """Indices of the context points the summary points snap to (unique, sorted); far points are dropped."""
    import numpy as np

    if len(summary) == 0 or len(context) == 0:
        return np.array([], dtype=int)
    within = _distances(context, context)[np.triu_indices(len(context), k=1)]
    limit = float(np.percentile(within, 50)) if len(within) else 0.0
    d = _distances(summary, context)
    nearest = d.argmin(axis=1)
    kept = nearest[d[np.arange(len(summary)), nearest] <= limit]
    return np.unique(kept)


def reduce(context: np.ndarray, summary: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Context and summary embeddings in UMAP space fitted on the context (unchanged for few sentences)."""
    if len(context) < MIN_POINTS_FOR_UMAP:
        return context, summary
    import umap

    reducer = umap.UMAP(n_components=min(UMAP_DIMENSIONS, len(context) - 2), n_neighbors=min(15, len(context) - 1),
                        random_state=seed, n_jobs=1)
    reduced_context = reducer.fit_transform(context)
    return reduced_context, reducer.transform(summary) if len(summary) else summary


def completeness(context: np.ndarray, summary: np.ndarray) -> float:
    """Completeness in [0, 1] of the summary points against the context points (same space)."""
    kept = snap_to_context(summary, context)
    if len(kept) == 0:
        return 0.0
    whole = three_segment_distance(context)
    if whole == 0.0:
        return 1.0
    return float(min(1.0, three_segment_distance(context[kept]) / whole))
