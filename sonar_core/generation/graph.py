"""The document graph: chunks (deduplicated, embedded, with language, key terms and topic) and links.

Built without any LLM (:mod:`.graph_parts` holds the steps), so the same documents and settings
give the same graph on every run. It is written as one JSON file and reused when the same
documents come again: its ``key`` is a SHA-256 over the documents' names and contents, the
chunking and linking settings, the embedding model, the encoder that ran it and :data:`GRAPH_VERSION`.
When the documents changed, the chunks the earlier graph already embedded keep their vectors
(:func:`earlier_vectors`, :class:`Reusing`), so only new or changed chunks are encoded.

The chunks are embedded by :func:`graph_encoder`'s choice (``embedding_backend``): ``auto`` (the
default) runs the embedding model with ONNX Runtime on the CPU (:mod:`sonar_core.models.onnx_encoder`,
about 0.8 of torch's CPU time, the same vectors to float32 rounding) when onnxruntime is installed,
the device is the CPU and the model is a mean-pooled sentence-transformers folder; otherwise, and
with ``torch``, the run's embedding service (torch) embeds them, with one line saying why.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from .chunking import Chunk, display_text, split_corpus
from .documents import Corpus
from .graph_parts import key_terms, links, near_duplicates, topics
from .language import detect_many
from .records import ChunkRecord, DuplicateRecord, LinkRecord, TopicRecord

__all__ = ["DocumentGraph", "GraphSettings", "build_graph", "read_graph_file", "stored_graph", "save_graph", "graph_key",
           "graph_encoder", "earlier_vectors", "Reusing", "GRAPH_VERSION", "EMBEDDING_BACKENDS"]

#: Part of every graph's key: a change in how graphs are built builds them afresh (2: the encoder is in the key).
GRAPH_VERSION = 2
#: Who embeds the chunks (see the module docstring).
EMBEDDING_BACKENDS = ("auto", "onnx", "torch")


@dataclass(frozen=True)
class GraphSettings:
    """How chunks are made and linked (all part of the graph's key)."""

    max_tokens: int = 250
    near_duplicate: float = 0.95
    link_k: int = 5
    link_similarity: float = 0.5
    embedding_model: str = "all-MiniLM-L6-v2"
    #: ``auto``, ``onnx`` or ``torch``; :func:`graph_encoder` replaces it by the encoder chosen
    #: (``onnx-v<export version>`` or ``torch``), so a graph made by another encoder is not reused.
    embedding_backend: str = "auto"


@dataclass
class DocumentGraph:
    """Chunks kept (``chunks``: dicts, see :func:`build_graph`), duplicates dropped, topics and links."""

    key: str
    chunks: list[ChunkRecord]
    duplicates: list[DuplicateRecord]
    topics: list[TopicRecord]
    links: list[LinkRecord]
    vectors: np.ndarray
    settings: dict[str, int | float | str] = field(default_factory=dict)  #: the GraphSettings it was built with
    seconds: dict[str, float] = field(default_factory=dict)
    #: True when read back from a file instead of built.
    reused: bool = False
    #: Chunks whose vectors came from the earlier graph of the same output (see :class:`Reusing`).
    vectors_reused: int = 0

    def __post_init__(self) -> None:
        self.index = {chunk["id"]: row for row, chunk in enumerate(self.chunks)}
        self.neighbours: dict[int, list[LinkRecord]] = {}
        for link in self.links:
            self.neighbours.setdefault(link["a"], []).append(link)
            self.neighbours.setdefault(link["b"], []).append(link)

    def linked(self, row: int) -> list[tuple[int, LinkRecord]]:
        """(other row, link) of every link of ``row``, the strongest first (ties by row)."""
        found = [(link["b"] if link["a"] == row else link["a"], link) for link in self.neighbours.get(row, [])]
        return sorted(found, key=lambda pair: (-(len(pair[1]["shared_terms"]) + pair[1]["similarity"]), pair[0]))


def graph_key(corpus: Corpus, settings: GraphSettings) -> str:
    payload = {"version": GRAPH_VERSION, "documents": corpus.fingerprint(), "settings": settings.__dict__}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def graph_encoder(settings: GraphSettings, service, say: Callable[[str], None] = lambda line: None,
                  ) -> tuple[GraphSettings, Callable[[list[str]], np.ndarray]]:
    """The settings with the encoder chosen, and its ``embed(texts)``; see the module docstring.

    ``service`` is the run's :class:`~sonar_core.models.embeddings.EmbeddingService` (its store,
    device and progress bar). The ONNX export happens here the first time (once per model and machine;
    if it fails, torch embeds, with one line saying why); its sessions are made on the first ``embed``
    call, so a graph read back from its file costs none.
    """
    from ..models import onnx_encoder

    backend = settings.embedding_backend
    if backend not in EMBEDDING_BACKENDS:
        raise ValueError(f"embedding_backend '{backend}': expected one of {', '.join(EMBEDDING_BACKENDS)}")
    why = None
    if backend != "torch":
        if not onnx_encoder.onnx_available():
            why = "onnxruntime is not installed (pip install 'sonar-eval[generate]')"
        elif service.device != "cpu":
            why = f"the embedding device is {service.device}, and the ONNX encoder runs on the CPU"
        else:
            folder = service.store.resolve(settings.embedding_model)
            why = onnx_encoder.onnx_supported(folder)
            if why is None:
                try:  # exported once per model and machine, here, so the key names the encoder that runs
                    onnx_encoder.onnx_model(folder, say=say)
                except Exception as error:  # noqa: BLE001 - any failure of the exporter leaves torch's path
                    why = f"the ONNX export of {folder.name} failed ({type(error).__name__}: {error})"
    if backend == "torch" or why is not None:
        if why is not None:
            say(f"the document graph embeds with torch: {why}")
        return replace(settings, embedding_backend="torch"), lambda texts: service.embed(texts, settings.embedding_model)
    encoders: list[onnx_encoder.OnnxEncoder] = []

    def embed(texts: list[str]) -> np.ndarray:
        if not encoders:
            encoders.append(onnx_encoder.OnnxEncoder(service.store.resolve(settings.embedding_model), say=say))
        advance = service.progress("embedding chunks (ONNX)", len(texts)) if service.progress and len(texts) > 512 else None
        return encoders[0].encode(texts, advance)

    return replace(settings, embedding_backend=f"onnx-v{onnx_encoder.EXPORT_VERSION}"), embed


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


def build_graph(corpus: Corpus, settings: GraphSettings, embed: Callable[[list[str]], np.ndarray]) -> DocumentGraph:
    """Chunk, deduplicate, embed, detect languages, find key terms, topics and links.

    ``embed(texts)`` returns normalised vectors (the embedding service's). Each kept chunk is a dict
    with ``id``, ``source``, ``heading``, ``position``, ``tokens``, ``text``, ``language``, ``topic``
    and ``terms``; each dropped one is in ``duplicates`` with ``duplicate_of``, ``kind`` (``exact`` or
    ``near``) and ``similarity``.
    """
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    chunks: list[Chunk] = split_corpus(corpus, settings.max_tokens)
    duplicates: list[DuplicateRecord] = []
    first: dict[str, str] = {}
    unique: list[Chunk] = []
    for chunk in chunks:
        digest = hashlib.sha256(_normal(chunk.text).encode()).hexdigest()
        if digest in first:
            duplicates.append({"id": chunk.id, "source": chunk.source, "duplicate_of": first[digest], "kind": "exact",
                               "similarity": 1.0})
            continue
        first[digest] = chunk.id
        unique.append(chunk)
    seconds["chunking"] = time.perf_counter() - started
    started = time.perf_counter()
    vectors = embed([c.display() for c in unique]) if unique else np.zeros((0, 384), dtype=np.float32)
    vectors = np.asarray(vectors, dtype=np.float32)
    seconds["embedding"] = time.perf_counter() - started
    started = time.perf_counter()
    near = near_duplicates(vectors, settings.near_duplicate)
    for row, (original, similarity) in sorted(near.items()):
        duplicates.append({"id": unique[row].id, "source": unique[row].source, "duplicate_of": unique[original].id,
                           "kind": "near", "similarity": round(similarity, 4)})
    keep = [row for row in range(len(unique)) if row not in near]
    kept = [unique[row] for row in keep]
    vectors = vectors[keep] if keep else vectors[:0]
    seconds["duplicates"] = time.perf_counter() - started
    started = time.perf_counter()
    languages = detect_many([c.display() for c in kept])
    terms = key_terms([c.display() for c in kept])
    seconds["languages_and_terms"] = time.perf_counter() - started
    started = time.perf_counter()
    topic_of = topics(vectors)
    seconds["topics"] = time.perf_counter() - started
    started = time.perf_counter()
    edges = links(vectors, terms, settings.link_k, settings.link_similarity)
    seconds["links"] = time.perf_counter() - started
    records: list[ChunkRecord] = [
        {"id": c.id, "source": c.source, "heading": c.heading, "position": c.position, "tokens": c.tokens,
         "text": c.text, "language": languages[row], "topic": topic_of[row], "terms": terms[row]}
        for row, c in enumerate(kept)]
    topic_list: list[TopicRecord] = []
    for number in sorted(set(topic_of)):
        members = [row for row, t in enumerate(topic_of) if t == number]
        counts: dict[str, int] = {}
        for row in members:
            for term in terms[row][:4]:
                counts[term] = counts.get(term, 0) + 1
        label = [term for term, _ in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:3]]
        topic_list.append({"topic": number, "label": ", ".join(label) or f"topic {number}", "chunks": len(members)})
    return DocumentGraph(key=graph_key(corpus, settings), chunks=records, duplicates=duplicates, topics=topic_list,
                         links=edges, vectors=vectors, settings=dict(settings.__dict__),
                         seconds={k: round(v, 3) for k, v in seconds.items()})


def save_graph(graph: DocumentGraph, path: Path) -> None:
    """Write the graph as JSON (vectors as base64 float32), atomically."""
    payload = {"graph_version": GRAPH_VERSION, "key": graph.key, "settings": graph.settings,
               "chunks": graph.chunks, "duplicates": graph.duplicates, "topics": graph.topics, "links": graph.links,
               "vectors": {"shape": list(graph.vectors.shape),
                           "float32_base64": base64.b64encode(np.ascontiguousarray(graph.vectors, dtype="<f4")
                                                              .tobytes()).decode("ascii")},
               "seconds": graph.seconds}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, path)


def read_graph_file(path: Path) -> dict | None:
    """The graph file at ``path`` as written by :func:`save_graph`, its ``vectors`` decoded to an (n, d)
    float32 array; None when it is missing, unreadable, cut short or of another :data:`GRAPH_VERSION`."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("graph_version") != GRAPH_VERSION:
            return None
        shape = tuple(payload["vectors"]["shape"])
        raw = base64.b64decode(payload["vectors"]["float32_base64"])
        payload["vectors"] = np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)
        if len(payload["chunks"]) != len(payload["vectors"]):
            return None
        return payload
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def stored_graph(stored: dict | None, key: str) -> DocumentGraph | None:
    """The graph a file read by :func:`read_graph_file` holds when it has ``key``; None otherwise (it is
    built again)."""
    if stored is None or stored.get("key") != key:
        return None
    try:
        return DocumentGraph(key=key, chunks=stored["chunks"], duplicates=stored["duplicates"], topics=stored["topics"],
                             links=stored["links"], vectors=stored["vectors"], settings=stored.get("settings") or {},
                             seconds=stored.get("seconds") or {}, reused=True)
    except (KeyError, TypeError):
        return None


def earlier_vectors(stored: dict | None, settings: GraphSettings) -> dict[str, np.ndarray]:
    """The vectors of a graph file read by :func:`read_graph_file`, by the text each chunk was embedded as.

    Empty unless that graph was made with the same embedding model and encoder as ``settings`` (after
    :func:`graph_encoder`): only then is a stored vector the one the encoder would give the text now (each
    text is encoded alone, so its vector depends on nothing else).
    """
    made = (stored or {}).get("settings") or {}
    if (stored is None or made.get("embedding_model") != settings.embedding_model
            or made.get("embedding_backend") != settings.embedding_backend):
        return {}
    try:
        return {display_text(c["heading"], c["text"]): stored["vectors"][row] for row, c in enumerate(stored["chunks"])}
    except (KeyError, TypeError):
        return {}


class Reusing:
    """An ``embed(texts)`` that takes the vectors of texts in ``earlier`` from there and has ``embed``
    encode only the others: a corpus that grew by a few documents re-embeds only their chunks (minutes
    saved at 10,000 chunks). ``reused`` counts the texts taken from ``earlier``."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], earlier: dict[str, np.ndarray]) -> None:
        self.embed, self.earlier, self.reused = embed, earlier, 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        fresh = [text for text in dict.fromkeys(texts) if text not in self.earlier]
        if not texts:
            return np.asarray(self.embed(texts), dtype=np.float32)
        table = dict(zip(fresh, np.asarray(self.embed(fresh), dtype=np.float32))) if fresh else {}
        self.reused += len(texts) - sum(1 for text in texts if text in table)
        return np.stack([table[text] if text in table else self.earlier[text] for text in texts])
