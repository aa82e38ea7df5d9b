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

The model is loaded (and a 30-row run warms up imports and Punkt) before anything is timed; the
two measurements alternate in order from repeat to repeat. The ratio floor / six is the six
evaluators' speed as a share of the floor's (goal >= 0.9), in wall-clock and in process CPU
time (less disturbed by other load on a shared machine).

A last run with every vector already cached times what the six add to encoding (splitting,
scoring, every artifact): ``floor / (floor + that)`` estimates the ratio without the noise of
two separate encodings.
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
from sonar_core.models import embeddings  # noqa: E402
from sonar_core.models import get_store, pick_device  # noqa: E402
from sonar_plugins.semantic import sentences  # noqa: E402

SIX = ["answer_semantic_similarity", "answer_semantic_sentence_similarity", "answer_relevancy_sentence_similarity",
       "groundedness_semantic_similarity", "context_relevancy_soft_recall_precision", "step_alignment_completeness"]
MODEL = embeddings.DEFAULT_EMBEDDING_MODEL


def _run(dataset: Path, out: Path, run_id: str, device: str) -> tuple[tuple[float, float], dict]:
    started, cpu = time.perf_counter(), time.process_time()
    result = sonar_core.run(dataset=str(dataset), evaluators=SIX, output_dir=str(out), run_id=run_id, device=device)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
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

        # (wall seconds, process CPU seconds) of each repeat. CPU time counts the work of every thread
        # of this process only, so other load on a shared machine disturbs it less than wall time.
        six, floor, counters, texts = [], [], {}, []

        def time_six(repeat: int) -> None:
            nonlocal counters, texts
            embeddings._PROCESS_CACHE.clear()
            sentences._SPLITS.clear()  # as in a fresh process: nothing split yet either
            elapsed, counters = _run(dataset, root / "out", f"six-{repeat}", device)
            six.append(elapsed)
            texts = _encoded_texts()

        def time_floor() -> None:
            started, cpu = time.perf_counter(), time.process_time()
            encoder.encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                           show_progress_bar=False)
            floor.append((time.perf_counter() - started, time.process_time() - cpu))

        time_six(0)  # the floor needs the texts of one run first
        time_floor()
        for repeat in range(1, args.repeats):
            if repeat % 2:
                time_floor()
                time_six(repeat)
            else:
                time_six(repeat)
                time_floor()
        for repeat, ((s_wall, s_cpu), (f_wall, f_cpu)) in enumerate(zip(six, floor), start=1):
            print(f"  repeat {repeat}: six {s_wall:7.2f} s wall {s_cpu:7.2f} s CPU   floor {f_wall:7.2f} s wall "
                  f"{f_cpu:7.2f} s CPU   ratio {f_wall / s_wall:.3f} wall {f_cpu / s_cpu:.3f} CPU")
        print(f"unique texts encoded: {counters['unique_encoded']} (requested {counters['requested']}, "
              f"{counters['calls']} embed calls, {counters['cache_hits']} cache hits; last run's encoding "
              f"{counters['seconds']:.2f} s wall)")
        for n, label in enumerate(("wall", "CPU")):
            best_six, best_floor = min(t[n] for t in six), min(t[n] for t in floor)
            ratios = [f[n] / s[n] for f, s in zip(floor, six)]
            print(f"{label:4s}: six evaluators best {best_six:7.2f} s ({len(records) / best_six:.0f} rows/s), "
                  f"floor best {best_floor:7.2f} s; ratio floor/six best-to-best {best_floor / best_six:.3f}, "
                  f"median of repeats {statistics.median(ratios):.3f} (goal >= 0.9)")
        sentences._SPLITS.clear()  # vectors stay cached: this run encodes nothing
        (extra_wall, extra_cpu), cached = _run(dataset, root / "out", "six-cached", device)
        assert cached["unique_encoded"] == 0, cached
        floor_cpu = statistics.median(f[1] for f in floor)
        print(f"six with every vector cached (splitting, scoring, artifacts): {extra_wall:.2f} s wall "
              f"{extra_cpu:.2f} s CPU; estimate floor / (floor + that) = {floor_cpu / (floor_cpu + extra_cpu):.3f} "
              f"(median floor CPU {floor_cpu:.2f} s)")

if __name__ == "__main__":
    main()
