"""Benchmarks of ``sonar generate`` (docs/generate.md): the document graph at 10,000 chunks, and the LLM
calls per kept item against a clean scripted server.

    python bench/bench_generate.py graph [--chunks 10000] [--device cpu] [--backend auto|onnx|torch] [--grow K]
    python bench/bench_generate.py calls [--chunks 300] [-n 100]

``graph`` writes a corpus of synthetic chunks (a ``.jsonl`` of the user's own chunks, so the count is
exact; each chunk five to eight sentences drawn from a fixed vocabulary with a seeded generator, so no two
are alike) and times :func:`~sonar_core.generation.graph.build_graph` step by step, with the encoder
:func:`~sonar_core.generation.graph.graph_encoder` chooses for ``--backend`` (reported as ``encoder``; the
model's load and a first ONNX export are done before the clock starts); with ``--grow K`` the graph is
then saved, a file of K new chunks joins the corpus and the graph is built again taking the saved
graph's vectors (what ``sonar generate`` does when documents were added), timed the same way
(``grown``). ``calls`` generates
``n`` items from such a corpus against tests/judge_server.py answering as tests/generation_script.py
does (no fault), and divides the server's calls by the items kept; the quality judge's calibration
(once per judge, then cached) is counted apart. Each prints the machine's load average and the graph its
CPU seconds (all threads) and the process's peak resident memory (model included): timings on a shared
machine are not a quiet machine's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

_NOUNS = ("policy", "claim", "roof", "window", "bicycle", "pipe", "boiler", "garage", "fence", "laptop", "jewellery",
          "carpet", "basement", "kitchen", "car", "trailer", "boat", "camera", "phone", "painting", "piano", "shed")
_EVENTS = ("storm", "flood", "fire", "theft", "hail", "lightning", "burglary", "leak", "frost", "subsidence")
_VERBS = ("covers", "excludes", "limits", "doubles", "reduces", "refunds", "replaces", "inspects")


def corpus(path: Path, chunks: int, seed: int = 7, prefix: str = "c") -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for number in range(chunks):
            sentences = []
            for _ in range(rng.randint(5, 8)):
                sentences.append(f"Plan {rng.randint(1, 999)} {rng.choice(_VERBS)} {rng.choice(_EVENTS)} damage to the "
                                 f"{rng.choice(_NOUNS)} up to {rng.randint(1, 90) * 250} dollars when the "
                                 f"{rng.choice(_NOUNS)} was {rng.choice(('locked', 'insured', 'inspected', 'listed'))} "
                                 f"within {rng.randint(2, 60)} days.")
            handle.write(json.dumps({"id": f"{prefix}{number:05d}", "text": " ".join(sentences),
                                     "source": f"{'' if prefix == 'c' else prefix + '-'}file-{number % 40:02d}.txt"}) + "\n")
    return path


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def bench_graph(chunks: int, device: str, backend: str, vectors_out: str | None = None, grow: int = 0) -> None:
    from sonar_core.generation.documents import read_corpus
    from sonar_core.generation.graph import (GraphSettings, Reusing, build_graph, earlier_vectors, graph_encoder,
                                             read_graph_file, save_graph)
    from sonar_core.models.embeddings import EmbeddingService

    with tempfile.TemporaryDirectory() as folder:
        path = corpus(Path(folder) / "chunks.jsonl", chunks)
        service = EmbeddingService(device=device)
        settings, embed = graph_encoder(GraphSettings(embedding_backend=backend), service, print)
        embed(["warm the model up"])  # the model's load (and a first ONNX export) is not the graph's time
        made = []
        started, cpu = time.perf_counter(), time.process_time()
        graph = build_graph(read_corpus([path]), settings, lambda texts: made.append(embed(texts)) or made[-1])
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        grown = None
        if grow:
            save_graph(graph, Path(folder) / "suite.graph.json")
            added = corpus(Path(folder) / "added.jsonl", grow, seed=8, prefix="new")
            started_again, cpu_again = time.perf_counter(), time.process_time()
            encode = Reusing(embed, earlier_vectors(read_graph_file(Path(folder) / "suite.graph.json"), settings))
            regraph = build_graph(read_corpus([path, added]), settings, encode)
            grown = {"added_chunks": grow, "kept": len(regraph.chunks), "vectors_reused": encode.reused,
                     "seconds": round(time.perf_counter() - started_again, 1),
                     "cpu_seconds": round(time.process_time() - cpu_again, 1), "steps": regraph.seconds}
    print(json.dumps({"bench": "graph", "encoder": settings.embedding_backend, "chunks": chunks,
                      "kept": len(graph.chunks), "topics": len(graph.topics),
                      "links": len(graph.links), "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
                      "steps": graph.seconds,
                      "grown": grown, "device": service.device, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                      "machine": load()}, indent=1))
    if vectors_out:  # every unique chunk's vector, in chunk order (to compare two encoders' graphs)
        import numpy as np

        np.save(vectors_out, made[0])


def bench_calls(chunks: int, n: int) -> None:
    from generation_script import reply
    from judge_server import JudgeServer, write_llm_configs
    from sonar_core.generate_config import GenerateSpec
    from sonar_core.generation.run import run_generation

    with tempfile.TemporaryDirectory() as folder, JudgeServer(default=reply, keep_bodies=False) as server:
        folder = Path(folder)
        configs = write_llm_configs(folder / "llm.yaml", server.base_url, max_concurrency=8)
        spec = GenerateSpec(docs=[str(corpus(folder / "chunks.jsonl", chunks))], n=n, output=str(folder / "o" / "s.jsonl"),
                            llm_configs=str(configs), llm_cache=str(folder / "c.sqlite"), calibrate=True, device="cpu")
        started = time.perf_counter()
        result = run_generation(spec)
        seconds = time.perf_counter() - started
        tallies = result.findings.costs["evaluators"]
        calibration = sum(t["calls"] for k, t in tallies.items() if k.startswith("calibrate "))
        kept = result.findings.counts["kept"] + result.findings.counts["flagged"]
        item_calls = server.calls - calibration
        print(json.dumps({"bench": "calls", "chunks": chunks, "planned": n, "kept": kept,
                          "calls": server.calls, "calibration_calls": calibration,
                          "calls_per_kept_item": round(item_calls / kept, 3) if kept else None,
                          "calls_per_kept_item_with_calibration": round(server.calls / kept, 3) if kept else None,
                          "by_purpose": {k: t["calls"] for k, t in tallies.items()}, "seconds": round(seconds, 1),
                          "machine": load()}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("graph", "calls"))
    parser.add_argument("--chunks", type=int, default=None)
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backend", default="auto", choices=("auto", "onnx", "torch"),
                        help="who embeds the graph's chunks (GraphSettings.embedding_backend)")
    parser.add_argument("--vectors", help="graph: save the chunks' vectors to this .npy file")
    parser.add_argument("--grow", type=int, default=0, metavar="K",
                        help="graph: then add a file of K new chunks and build the graph again, reusing the vectors")
    args = parser.parse_args()
    if args.what == "graph":
        bench_graph(args.chunks or 10_000, args.device, args.backend, args.vectors, args.grow)
    else:
        bench_calls(args.chunks or 300, args.n)


if __name__ == "__main__":
    main()
