"""Embedding counters of a Ray run, counted as one process counts them.

A local run's ``services.embeddings`` in run.json counts the texts its evaluators asked for, the
unique ones it encoded and the cache hits, over the one vector cache of the process. On Ray the
texts are encoded by several actors, each with its own cache, so what they encoded together
depends on how many there are and which shards each took. The scores do not (each text is encoded
on its own: :mod:`sonar_core.models.embeddings`), and neither should run.json. So each worker
records the requests its evaluators made (the model and a digest of each text, in order:
:class:`RecordingEmbeddings`), and the driver replays them, in shard order, through a cache of
digests that behaves as the process's vector cache (:class:`EmbeddingTally`): the counters are
those of one fresh process that scored the shards in order, whatever the number of actors. What
the actors encoded themselves is in the journal's shard events (``encoded``).
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from ..models import EmbeddingService
from ..models.embeddings import _VectorCache

__all__ = ["RecordingEmbeddings", "EmbeddingTally", "digest"]


def digest(text: str) -> bytes:
    """16 bytes that stand for ``text`` in a recorded request (the texts themselves stay on the worker)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class RecordingEmbeddings(EmbeddingService):
    """A worker's embedding service that also records each request: ``(model, [digest of each text])``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests: list[tuple[str, list[bytes]]] = []

    def embed(self, texts: Sequence[str], model: str | None = None):
        self.requests.append((model or self.default_model, [digest(text) for text in texts]))
        return super().embed(texts, model)

    def take_requests(self) -> list[tuple[str, list[bytes]]]:
        """The requests since the last call (a shard's), oldest first."""
        taken, self.requests = self.requests, []
        return taken


class EmbeddingTally:
    """The driver's replay of the workers' requests into the run's embedding service's counters.

    Mirrors :meth:`EmbeddingService.embed`'s counting over a least-recently-used cache of digests
    with the vector cache's limit, keyed by the model's folder as resolved on the driver (two names
    of one folder share entries, as they share vectors in one process). It starts empty, as a
    fresh process's cache does.
    """

    def __init__(self, service: EmbeddingService) -> None:
        self.service = service
        self._seen = _VectorCache()
        self._folders: dict[str, str] = {}

    def replay(self, requests: list[tuple[str, list[bytes]]]) -> None:
        for model, digests in requests:
            folder = self._folders.get(model)
            if folder is None:
                folder = self._folders[model] = str(self.service.store.resolve(model).resolve())
            unique = dict.fromkeys(digests)
            missing = [d for d in unique if self._seen.get((folder, d)) is None]
            for d in missing:
                self._seen.put((folder, d), True)
            self.service._count(model, requested=len(digests), calls=1, cache_hits=len(digests) - len(missing),
                                unique_encoded=len(missing))
