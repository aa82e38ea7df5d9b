"""One embedding request per batch, and cosine similarities on the returned vectors.

Each evaluator collects every text a batch of rows needs (answers, questions, expected
answers, sentences, steps), asks ``ctx.embed`` once for the unique ones and then looks the
vectors up by text. The vectors are L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["TextVectors", "similarities", "pair_similarities"]


class TextVectors:
    """The embeddings of a batch's unique texts, looked up by text."""

    def __init__(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        self._index = {text: i for i, text in enumerate(texts)}
        self.matrix = matrix

    def of(self, texts: Iterable[str]) -> np.ndarray:
        """(n, d) vectors of ``texts``, in order."""
        return self.matrix[[self._index[text] for text in texts]]


def similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities (n, m) of normalised rows ``a`` (n, d) and ``b`` (m, d), clipped to [0, 1].

    A negative cosine (texts pointing away from each other) counts as 0, unrelated, so every
    score stays in the catalogue's range [0, 1]; the upper clip only removes float rounding
    (an identical pair may come out as 1.0000001).
    """
    import numpy as np

    return np.clip(a @ b.T, 0.0, 1.0)


def pair_similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row of ``a`` with the same row of ``b`` (n,), clipped to [0, 1]."""
    import numpy as np

    return np.clip(np.einsum("ij,ij->i", a, b), 0.0, 1.0)
