"""The embedding service: sentence embeddings for every evaluator of a run, each text encoded once.

Evaluators ask ``ctx.embed(texts, model=...)``; the service returns L2-normalised float32
vectors (so a dot product is the cosine similarity). Vectors are cached by (model folder, text)
for the whole process: the six semantic evaluators of a run embed the same answers, questions
and context sentences, and a second run in the same process finds them again. Only texts not
yet cached are encoded.

Each text is encoded on its own (a forward pass of one text, ``batch_size`` 1): a transformer's
output for a text depends, in its last bits, on the other texts of its batch (their padding changes
the shapes of the sums), so a text encoded with companions would get a vector that depends on
which texts happened to be missing from the cache in the same request, that is, on everything the
process did before. Alone, a text's vector depends only on the text and the model, so a run's
scores are the same whatever order its evaluators, batches, Ray shards or Ray actors ask in
(docs/scale-out.md). For the same reason the encoder runs on one torch thread: with two, a long
text's vector can differ in its last bits (intra-op threads may split a small product's sums),
and a Ray actor runs its model on one. On a CPU one text at a time is no slower: measured on
all-MiniLM-L6-v2 with one thread, it took 0.82x the CPU time of the length-sorted batches of 64
used before (no padding is computed). The cores torch would have used are not left idle: a request
of many texts is shared among as many encoder threads (at most ``_MAX_ENCODERS``), each with its own
copy of the encoder (a fast tokenizer cannot be shared between threads), each still encoding one
text per forward pass on one torch thread, so the vectors are the same bytes.

Each run has its own service object, whose counters (texts requested, unique texts encoded,
cache hits, seconds spent encoding) go to the journal and ``run.json``. The service may be called
from several threads (an evaluator embedding ahead on a worker thread while its event loop asks
for vectors): encoder calls take turns, and a text another thread has just encoded is not encoded
again.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypedDict

from .devices import pick_device
from .store import ModelLoad, ModelStore, get_store


class EmbeddingCounts(TypedDict):
    """One embedding model's counters over a run."""
    requested: int  #: texts asked for
    unique_encoded: int  #: texts the model encoded (the rest came from the cache)
    cache_hits: int
    calls: int
    seconds: float


class EmbeddingsSummary(TypedDict):
    """The embedding service's part of run.json."""
    device: str
    models: dict[str, EmbeddingCounts]
    model_loads: list[ModelLoad]

if TYPE_CHECKING:  # pragma: no cover
    # numpy is imported where vectors are made: every run makes this service, few embed anything.
    import numpy as np

__all__ = ["EmbeddingService", "DEFAULT_EMBEDDING_MODEL", "cosine_matrix", "cosine"]

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"

#: Texts per forward pass: one, so a vector depends on its text alone (see the module docstring).
ENCODE_BATCH = 1
#: Texts per ``encode`` call (a progress bar moves once per chunk).
_CHUNK = 512
#: Encoder threads at most (each holds a copy of the model), where torch would have had as many threads;
#: a Ray actor runs torch on one thread, so it encodes on one.
_MAX_ENCODERS = 4
#: Texts an extra encoder thread must have to be worth starting.
_TEXTS_PER_ENCODER = 8

#: Vectors kept for the process (384-d float32: about 150 MB at the bound).
_CACHE_LIMIT = 100_000


class _VectorCache:
    """(model folder, text) -> vector, least recently used out first; shared by all runs."""

    def __init__(self, limit: int = _CACHE_LIMIT) -> None:
        self.limit = limit
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        vector = self._data.get(key)
        if vector is not None:
            self._data.move_to_end(key)
        return vector

    def put(self, key: tuple[str, str], vector: np.ndarray) -> None:
        self._data[key] = vector
        self._data.move_to_end(key)
        while len(self._data) > self.limit:
            self._data.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self._data.clear()


_PROCESS_CACHE = _VectorCache()
#: One encoder call at a time in the process: a Hugging Face fast tokenizer used from two threads at
#: once fails ("Already borrowed"), and two encodes on two cores would only slow each other.
_ENCODE_LOCK = threading.Lock()


@contextmanager
def _one_torch_thread():
    """torch on one thread while texts are encoded (see the module docstring); yields the count it had
    (the encoder threads that may take its place), and restores it after. Encoder calls take turns
    (``_ENCODE_LOCK``), so two encodes never race on the setting."""
    import torch

    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield before
    finally:
        if before != 1:
            torch.set_num_threads(before)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities of normalised row vectors: ``a`` (n, d) x ``b`` (m, d) -> (n, m)."""
    if len(a) == 0 or len(b) == 0:
        import numpy as np

        return np.zeros((len(a), len(b)), dtype=np.float32)
    return a @ b.T


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two normalised vectors."""
    import numpy as np

    return float(np.dot(a, b))


class EmbeddingService:
    """Embeds texts for one run with a shared per-process cache; see the module docstring."""

    def __init__(self, store: ModelStore | None = None, device: str = "auto", batch_size: int = ENCODE_BATCH,
                 default_model: str = DEFAULT_EMBEDDING_MODEL,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None) -> None:
        self.store = store or get_store()
        self._device_setting = device
        self.batch_size = batch_size
        self.default_model = default_model
        #: ``progress(label, total)`` starts a progress bar and returns its advance function.
        self.progress = progress
        self._cache = _PROCESS_CACHE
        self.stats: dict[str, EmbeddingCounts] = {}
        self._stats_lock = threading.Lock()
        self._twin_encoders: dict[str, list[Any]] = {}
        # The store lives for the process; this run reports only the loads that happen from now on.
        self._first_load = len(self.store.loads)

    @property
    def device_setting(self) -> str:
        """The device as configured (``auto`` until a model is first used)."""
        return self._device_setting

    @property
    def device(self) -> str:
        """The device models run on; ``auto`` is resolved on first use (it imports torch)."""
        if self._device_setting == "auto":
            self._device_setting = pick_device("auto")
        return self._device_setting

    def _count(self, model: str, **increments: float) -> None:
        with self._stats_lock:
            counter = self.stats.setdefault(model, {"requested": 0, "unique_encoded": 0, "cache_hits": 0,
                                                    "calls": 0, "seconds": 0.0})
            for name, value in increments.items():
                counter[name] += value

    def check(self, model: str | None = None) -> None:
        """Raise :class:`~sonar_core.errors.ModelMissingError` now if ``model`` is missing."""
        self.store.resolve(model or self.default_model)

    def dimension(self, model: str | None = None) -> int:
        encoder = self.store.load_sentence_transformer(model or self.default_model, self.device)
        return int(encoder.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str], model: str | None = None) -> np.ndarray:
        """Normalised embeddings of ``texts`` as an (n, d) float32 array, in order."""
        import numpy as np

        model = model or self.default_model
        folder = str(self.store.resolve(model).resolve())
        found: dict[str, np.ndarray] = {}

        def look_up() -> list[str]:
            with self._cache.lock:
                for text in dict.fromkeys(texts):
                    if text not in found and (vector := self._cache.get((folder, text))) is not None:
                        found[text] = vector
            return [text for text in dict.fromkeys(texts) if text not in found]

        missing = look_up()
        if missing:
            with _ENCODE_LOCK:
                missing = look_up()  # another thread may have encoded some while this one waited
                if missing:
                    fresh = self._encode(model, missing)
                    with self._cache.lock:
                        for text, vector in zip(missing, fresh):
                            self._cache.put((folder, text), vector)
                            found[text] = vector
        # Repeats within a request are hits too.
        self._count(model, requested=len(texts), calls=1, cache_hits=len(texts) - len(missing),
                    unique_encoded=len(missing))
        if not texts:
            return np.zeros((0, self.dimension(model)), dtype=np.float32)
        return np.stack([found[text] for text in texts])

    def _encode(self, model: str, texts: list[str]) -> np.ndarray:
        encoder = self.store.load_sentence_transformer(model, self.device)
        started = time.perf_counter()
        with _one_torch_thread() as threads:
            workers = min(threads, _MAX_ENCODERS, len(texts) // _TEXTS_PER_ENCODER)
            encoders = [encoder] + self._twins(encoder, model, workers - 1) if workers > 1 else [encoder]
            fresh = self._encode_chunks(encoders, model, texts)
        self._count(model, seconds=time.perf_counter() - started)
        return fresh

    def _twins(self, encoder: Any, model: str, count: int) -> list[Any]:
        """``count`` copies of ``encoder`` (same weights, own tokenizer), made once per model: a fast
        tokenizer cannot be shared between threads."""
        import copy

        twins = self._twin_encoders.setdefault(model, [])
        while len(twins) < count:
            twins.append(copy.deepcopy(encoder))
        return twins[:count]

    def _encode_chunks(self, encoders: list[Any], model: str, texts: list[str]) -> np.ndarray:
        import numpy as np

        # Chunks only so a progress bar can move; each text is still encoded on its own (batch_size 1).
        chunk = _CHUNK
        advance = self.progress(f"embedding ({model})", len(texts)) if self.progress and len(texts) > chunk else None

        def encode(encoder: Any, part: list[str]) -> np.ndarray:
            return encoder.encode(part, batch_size=self.batch_size, convert_to_numpy=True,
                                  normalize_embeddings=True, show_progress_bar=False).astype(np.float32)

        parts = []
        for start in range(0, len(texts), chunk):
            part = texts[start:start + chunk]
            if len(encoders) == 1:
                parts.append(encode(encoders[0], part))
            else:
                # Each encoder thread takes every n-th text (lengths spread evenly), one text per forward
                # pass on one torch thread as before: the vectors are those of one thread, in less time.
                from concurrent.futures import ThreadPoolExecutor

                n = len(encoders)
                with ThreadPoolExecutor(n, thread_name_prefix="sonar-encode") as pool:
                    shares = list(pool.map(encode, encoders, [part[i::n] for i in range(n)]))
                merged = np.empty((len(part), shares[0].shape[1]), dtype=np.float32)
                for i, share in enumerate(shares):
                    merged[i::n] = share
                parts.append(merged)
            if advance:
                advance(len(part))
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def summary(self) -> dict[str, EmbeddingCounts]:
        """Counters per model, rounded, for the journal and run.json."""
        with self._stats_lock:
            return {model: {**c, "seconds": round(c["seconds"], 3)} for model, c in self.stats.items()}

    def loads(self) -> list[ModelLoad]:
        """Models the store loaded since this service was made (one run)."""
        return list(self.store.loads[self._first_load:])

    def describe(self) -> EmbeddingsSummary:
        """The service's part of run.json: device, counters per model, model loads."""
        return {"device": self._device_setting, "models": self.summary(), "model_loads": self.loads()}
