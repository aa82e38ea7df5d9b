"""The six embedding evaluators together against the encoding floor, on one generated dataset.

Usage: python bench/bench_embedding_evaluators.py [--rows 1000] [--repeats 2] [--device cpu]

The dataset comes from ``rag_data.make_records`` (1,000 rows, 3 models; questions, expected
answers, three context chunks, procedures for half the cases). Each repeat times:

* **six**: one ``sonar_core.run`` of the six semantic evaluators over the dataset (load, split,
  embed, score, write every artifact), with the process-wide vector cache cleared first so
  every text is encoded in that run;
* **floor**: one batched ``SentenceTransformer.encode`` of exactly the texts that run encoded
  (read back from the vector cache, so they are collected the same way), with the service's
  batch size and normalisation, and nothing else.

The model is loaded (and a 30-row run warms up imports and Punkt) before anything is timed.
The ratio floor / six is the six evaluators' speed as a share of the floor's (goal >= 0.9).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rag_data import make_records  # noqa: E402

import sonar_core  # noqa: E402
from sonar_core import embeddings  # noqa: E402
from sonar_core.model_store import get_store, pick_device  # noqa: E402

SIX = ["answer_semantic_similarity", "answer_semantic_sentence_similarity", "answer_relevancy_sentence_similarity",
       "groundedness_semantic_similarity", "context_relevancy_soft_recall_precision", "step_alignment_completeness"]
MODEL = embeddings.DEFAULT_EMBEDDING_MODEL


def _run(dataset: Path, out: Path, run_id: str, device: str) -> tuple[float, dict]:
    started = time.perf_counter()
    result = sonar_core.run(dataset=str(dataset), evaluators=SIX, output_dir=str(out), run_id=run_id, device=device)
    elapsed = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"run failed: {result.message}")
    record = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    return elapsed, record["services"]["embeddings"]["models"][MODEL]


def _encoded_texts() -> list[str]:
    folder = str(get_store().resolve(MODEL).resolve())
    return [text for (model, text) in embeddings._PROCESS_CACHE._data if model == folder]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    device = pick_device(args.device)
    encoder = get_store().load_sentence_transformer(MODEL, device)
    batch_size = embeddings.EmbeddingService().batch_size
    records = make_records(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dataset = root / "rag.json"
        dataset.write_text(json.dumps(records), encoding="utf-8")
        warm = root / "warm.json"
        warm.write_text(json.dumps(make_records(30, seed=99)), encoding="utf-8")
        _run(warm, root / "out", "warm-up", device)
        print(f"{len(records)} rows, {len({r['test_case_key'] for r in records})} test cases, device {device}, "
              f"encode batch size {batch_size}")

        six, floor, counters = [], [], {}
        for repeat in range(args.repeats):
            embeddings._PROCESS_CACHE.clear()
            elapsed, counters = _run(dataset, root / "out", f"six-{repeat}", device)
            six.append(elapsed)
            texts = _encoded_texts()
            started = time.perf_counter()
            encoder.encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                           show_progress_bar=False)
            floor.append(time.perf_counter() - started)
            print(f"  repeat {repeat + 1}: six {six[-1]:7.2f} s (encoding {counters['seconds']:.2f} s)   "
                  f"floor {floor[-1]:7.2f} s   ratio {floor[-1] / six[-1]:.3f}")
        print(f"unique texts encoded: {counters['unique_encoded']} (requested {counters['requested']}, "
              f"{counters['calls']} embed calls, {counters['cache_hits']} cache hits)")
        best_six, best_floor = min(six), min(floor)
        print(f"six evaluators: best {best_six:.2f} s, median {statistics.median(six):.2f} s; "
              f"{len(records) / best_six:.0f} rows/s")
        print(f"floor (encode only): best {best_floor:.2f} s, median {statistics.median(floor):.2f} s")
        print(f"speed ratio floor/six: best-to-best {best_floor / best_six:.3f}, "
              f"median {statistics.median(f / s for f, s in zip(floor, six)):.3f} (goal >= 0.9)")


if __name__ == "__main__":
    main()
