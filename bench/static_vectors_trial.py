"""A trial, not a feature: would static word-piece vectors make the document graph fast enough, and what
would they cost? (docs/generate.md, Benchmarks; issue 38's graph of 10,000 chunks in 90 s.)

    python bench/static_vectors_trial.py [--chunks 1000] [--docs PATH ...]

Static vectors are distilled from the graph's own model (all-MiniLM-L6-v2) the way Model2Vec describes its
distillation: every word piece of the vocabulary goes through the model alone (between [SEP] and [CLS]),
the mean of the three outputs is its vector; the [unused] pieces are dropped, a PCA keeps 256 dimensions,
and each piece is weighted by SIF over a Zipf estimate of its frequency (a / (a + p), a = 1e-4). A text is
the mean of its word pieces' vectors, normalised. The script builds the document graph of each corpus
twice (the graph's encoder, then the static vectors) and prints the time of each embedding and what the
graph decides differently: near duplicates, then, on the chunks both keep, the link sets' Jaccard, the
overlap of each chunk's ten nearest neighbours, the topics' adjusted Rand index, and how often a chunk's
five nearest neighbours come from its own file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


def distil(folder: Path, dims: int = 256, sif: float = 1e-4):
    """(tokenizer, table): a vector per vocabulary id (zeros for the dropped pieces)."""
    import torch
    from sklearn.decomposition import PCA
    from tokenizers import Tokenizer
    from transformers import AutoModel

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    model = AutoModel.from_pretrained(folder).eval()
    vocab = tokenizer.get_vocab()
    size = len(vocab)
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    ids = torch.arange(size)
    triples = torch.stack([torch.full([size], sep), ids, torch.full([size], cls)], dim=1)
    outputs = []
    with torch.no_grad():
        for start in range(0, size, 1024):
            batch = triples[start:start + 1024]
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch),
                           token_type_ids=torch.zeros_like(batch)).last_hidden_state
            outputs.append(hidden.mean(dim=1).numpy())
    raw = np.concatenate(outputs)
    kept = np.array([i for token, i in sorted(vocab.items(), key=lambda pair: pair[1]) if not token.startswith("[unused")])
    reduced = PCA(n_components=dims, svd_solver="full").fit_transform(raw[kept])
    inverse_rank = 1 / np.arange(2, len(kept) + 2)
    reduced *= (sif / (sif + inverse_rank / inverse_rank.sum()))[:, None]
    table = np.zeros((size, dims), dtype=np.float32)
    table[kept] = reduced
    return tokenizer, table


def static_embed(tokenizer, table):
    def embed(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
            if encoding.ids:
                out[row] = table[encoding.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)
    return embed


def compare(name: str, corpus, settings, contextual, static) -> dict:
    from sklearn.metrics import adjusted_rand_score

    from sonar_core.generation.graph import build_graph
    from sonar_core.generation.graph_parts import links, topics

    timed = {}

    def clocked(label, embed):
        def run(texts):
            started = time.perf_counter()
            vectors = embed(texts)
            timed[label] = round(time.perf_counter() - started, 2)
            return vectors
        return run

    one = build_graph(corpus, settings, clocked("contextual_seconds", contextual))
    other = build_graph(corpus, settings, clocked("static_seconds", static))
    near = {"contextual": sum(d["kind"] == "near" for d in one.duplicates),
            "static": sum(d["kind"] == "near" for d in other.duplicates)}
    # The same chunks for both: the static graph's near-duplicate step off, then the contextual one's chunks.
    every = build_graph(corpus, replace(settings, near_duplicate=1.01), static)
    rows = [every.index[c["id"]] for c in one.chunks]
    vectors = every.vectors[rows]
    static_links = {(link["a"], link["b"]) for link in links(vectors, [c["terms"] for c in one.chunks],
                                                              settings.link_k, settings.link_similarity)}
    context_links = {(link["a"], link["b"]) for link in one.links}
    context_sims, static_sims = one.vectors @ one.vectors.T, vectors @ vectors.T
    np.fill_diagonal(context_sims, -2)
    np.fill_diagonal(static_sims, -2)
    ten = min(10, len(rows) - 1)
    overlap = np.mean([len(set(a) & set(b)) / ten for a, b in zip(np.argsort(-context_sims, axis=1)[:, :ten],
                                                                 np.argsort(-static_sims, axis=1)[:, :ten])])
    sources = np.array([c["source"] for c in one.chunks])
    five = min(5, len(rows) - 1)
    same_file = {label: round(float((sources[np.argsort(-sims, axis=1)[:, :five]] == sources[:, None]).mean()), 3)
                 for label, sims in (("contextual", context_sims), ("static", static_sims))}
    return {"corpus": name, "chunks": len(one.chunks) + sum(d["kind"] == "near" for d in one.duplicates), **timed,
            "near_duplicates": near, "link_jaccard": round(len(context_links & static_links)
                                                           / max(1, len(context_links | static_links)), 3),
            "top10_overlap": round(float(overlap), 3),
            "topic_ari": round(float(adjusted_rand_score([c["topic"] for c in one.chunks], topics(vectors))), 3),
            "top5_same_file": same_file}


def main() -> None:
    import bench_generate
    from sonar_core.generation.documents import read_corpus
    from sonar_core.generation.graph import GraphSettings, graph_encoder
    from sonar_core.models.embeddings import EmbeddingService

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1000, help="synthetic chunks (bench_generate's corpus)")
    parser.add_argument("--docs", nargs="*", default=[], help="folders or files of real documents to compare on too")
    args = parser.parse_args()
    service = EmbeddingService(device="cpu")
    settings, contextual = graph_encoder(GraphSettings(), service)
    started = time.perf_counter()
    tokenizer, table = distil(service.store.resolve(settings.embedding_model))
    print(json.dumps({"distillation_seconds": round(time.perf_counter() - started, 1), "encoder": settings.embedding_backend,
                      "machine": bench_generate.load()}))
    static = static_embed(tokenizer, table)
    with tempfile.TemporaryDirectory() as folder:
        corpora = [("synthetic", read_corpus([bench_generate.corpus(Path(folder) / "chunks.jsonl", args.chunks)]))]
        corpora += [(path, read_corpus([Path(path)])) for path in args.docs]
        for name, corpus in corpora:
            print(json.dumps(compare(name, corpus, settings, contextual, static)))


if __name__ == "__main__":
    main()
