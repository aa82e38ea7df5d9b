"""Model work that scales out (issue 41): a vector depends on its text alone, the size of a Ray actor pool,
and run.json's embedding counters replayed as one process counts them. No Ray needed here; the runs on
one and two actors are in test_ray_executor.py."""

from __future__ import annotations

import numpy as np
import pytest

from sonar_core.config import build_config
from sonar_core.errors import ConfigError
from sonar_core.execution.ray_embeddings import EmbeddingTally, RecordingEmbeddings, digest
from sonar_core.execution.ray_pool import pool_size
from sonar_core.models import EmbeddingService
from sonar_core.models.embeddings import _PROCESS_CACHE

#: Texts of unlike lengths (so a batch of them is padded to the longest).
TEXTS = [
    "Claims are paid within ten days of approval.",
    "Yes.",
    "Upload photos of the damage, the police report if there is one, and the repair estimate from a licensed "
    "contractor; an adjuster reviews them and may call you to arrange a visit within five working days.",
    "The grace period is thirty days.",
    "Flood damage is covered only by a separate flood policy, not by the standard home policy.",
    "Cancel online.",
]


def _vectors(service: EmbeddingService, groups: list[list[str]]) -> dict[str, bytes]:
    """Each text's vector as bytes, the texts asked for in ``groups`` (one request each) by a fresh cache."""
    _PROCESS_CACHE.clear()
    out = {}
    for group in groups:
        for text, vector in zip(group, service.embed(group)):
            out[text] = vector.tobytes()
    return out


def test_a_texts_vector_does_not_depend_on_the_texts_asked_with_it():
    together = _vectors(EmbeddingService(device="cpu"), [TEXTS])
    alone = _vectors(EmbeddingService(device="cpu"), [[t] for t in reversed(TEXTS)])
    pairs = _vectors(EmbeddingService(device="cpu"), [TEXTS[3:5], TEXTS[:3], TEXTS[5:]])
    assert together == alone == pairs
    # The check means something: encoded in batches (as before), the model's vectors do depend on the
    # companions: the padding to the longest text of a batch changes some vectors' last bits.
    batched = _vectors(EmbeddingService(device="cpu", batch_size=64), [TEXTS])
    assert batched != alone
    assert max(np.abs(np.frombuffer(batched[t], np.float32) - np.frombuffer(alone[t], np.float32)).max()
               for t in TEXTS) < 1e-6  # the last bits only
    _PROCESS_CACHE.clear()


def test_texts_are_encoded_on_one_torch_thread_and_the_process_keeps_its_own_count():
    """On this machine's CPU this text's vector differs in its last bits between one and two torch threads
    (found among the demo's texts); a Ray actor encodes on one, so the service does everywhere."""
    import torch

    from sonar_core.models import get_store

    text = "12% off the premium of each policy."
    encoder = get_store().load_sentence_transformer("all-MiniLM-L6-v2", "cpu")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        alone = encoder.encode([text], batch_size=1, convert_to_numpy=True, normalize_embeddings=True)[0]
        torch.set_num_threads(2)
        _PROCESS_CACHE.clear()
        vector = EmbeddingService(device="cpu").embed([text])[0]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
        _PROCESS_CACHE.clear()
    assert vector.tobytes() == alone.astype(np.float32).tobytes()


def test_a_long_request_is_shared_among_encoder_threads_and_keeps_the_vectors_of_one_thread():
    """Where torch would have two threads, a request of 16 texts or more is encoded by two threads, each
    with its own copy of the encoder and one text per forward pass on one torch thread: the vectors are
    byte for byte those of one thread encoding them all, in request order."""
    import torch

    from sonar_core.models import get_store
    from sonar_core.models import embeddings as service_module

    texts = [f"{t} ({i})" for i, t in enumerate(TEXTS * 3)]  # 18 texts of unlike lengths
    encoder = get_store().load_sentence_transformer("all-MiniLM-L6-v2", "cpu")
    before = torch.get_num_threads()
    seen: set[str] = set()
    real = service_module.EmbeddingService._encode_chunks

    def spy(self, encoders, model, chunk):
        seen.add(f"{len(encoders)} encoders")
        return real(self, encoders, model, chunk)

    try:
        torch.set_num_threads(1)
        alone = encoder.encode(texts, batch_size=1, convert_to_numpy=True, normalize_embeddings=True)
        torch.set_num_threads(2)
        _PROCESS_CACHE.clear()
        service = EmbeddingService(device="cpu")
        service_module.EmbeddingService._encode_chunks = spy
        vectors = service.embed(texts)
        assert torch.get_num_threads() == 2
    finally:
        service_module.EmbeddingService._encode_chunks = real
        torch.set_num_threads(before)
        _PROCESS_CACHE.clear()
    assert seen == {"2 encoders"}
    assert len(service._twin_encoders["all-MiniLM-L6-v2"]) == 1
    assert service._twin_encoders["all-MiniLM-L6-v2"][0] is not encoder
    assert vectors.tobytes() == alone.astype(np.float32).tobytes()


def test_a_pool_has_the_clusters_cpus_or_the_number_asked_for_never_more_than_the_cpus_or_shards():
    assert pool_size("auto", shards=10, total=4) == 4
    assert pool_size(None, shards=3, total=4) == 3  # no idle actor
    assert pool_size(2, shards=10, total=4) == 2
    assert pool_size(8, shards=10, total=4) == 4  # a fifth actor would wait for a CPU forever
    assert pool_size("auto", shards=10, total=0) == 1  # one is always made


def test_ray_model_actors_is_auto_or_a_positive_number():
    assert build_config({"dataset": "demo"}).ray_model_actors == "auto"
    assert build_config({"dataset": "demo", "ray_model_actors": "3"}).ray_model_actors == 3
    with pytest.raises(ConfigError) as caught:
        build_config({"dataset": "demo", "ray_model_actors": 0})
    assert str(caught.value) == ("<config>: configuration key 'ray_model_actors': 'auto' or a number of actors "
                                 "(1 or more), not 0")


def test_the_driver_counts_the_workers_requests_as_one_process_counts_them():
    """Two workers' requests (each with its own cache) replayed in shard order give the counters of one
    service that got them all: the second worker's texts that the first encoded are hits."""
    requests = [["a", "b", "a"], ["b", "c"], [], ["c", "d", "a"]]
    _PROCESS_CACHE.clear()
    one = EmbeddingService(device="cpu")
    for texts in requests:
        one.embed(texts)
    workers = [RecordingEmbeddings(device="cpu"), RecordingEmbeddings(device="cpu")]
    recorded = []
    for i, texts in enumerate(requests):
        _PROCESS_CACHE.clear()  # another process: an empty cache of its own
        workers[i % 2].embed(texts)
        recorded += workers[i % 2].take_requests()
    assert recorded[0] == ("all-MiniLM-L6-v2", [digest("a"), digest("b"), digest("a")])
    driver = EmbeddingService(device="cpu")
    EmbeddingTally(driver).replay(recorded)
    # By hand: 8 texts asked for in 4 requests; a, b, c, d encoded once; the other 4 are hits.
    expected = {"requested": 8, "unique_encoded": 4, "cache_hits": 4, "calls": 4}
    assert {k: driver.stats["all-MiniLM-L6-v2"][k] for k in expected} == expected
    assert {k: one.stats["all-MiniLM-L6-v2"][k] for k in expected} == expected
    _PROCESS_CACHE.clear()
