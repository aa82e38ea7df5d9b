"""Benchmark: Sonar's BLEU evaluator throughput on the ROUGE benchmark's generated rows.

Scores N rows (default 10,000: N/3 references x 3 models, see summarization_data.py) with
``BleuEvaluator`` through ``sonar_core.testing.score_rows`` and prints rows per second and the
mean BLEU-1..4 per model (a sanity check: models that keep more of the reference score higher).

    .venv/bin/python bench/bench_bleu.py [--rows 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sonar_core.testing import score_rows  # noqa: E402
from sonar_plugins.summarization.bleu import BleuEvaluator  # noqa: E402
from summarization_data import make_rows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rows = make_rows(args.rows, args.seed)
    print(f"{len(rows)} rows, {len({r.expected_output for r in rows})} distinct references")
    start = time.perf_counter()
    results = score_rows(BleuEvaluator, rows)
    elapsed = time.perf_counter() - start
    print(f"sonar BleuEvaluator (score_rows): {elapsed:8.3f} s  {len(rows) / elapsed:10.0f} rows/s")

    sums: dict[str, list[float]] = defaultdict(lambda: [0.0] * 5)
    for row, result in zip(rows, results):
        acc = sums[row.model_key]
        for i, key in enumerate(("bleu_1", "bleu_2", "bleu_3", "bleu_4")):
            acc[i] += result.values[key]
        acc[4] += 1
    for model, acc in sums.items():
        means = "  ".join(f"BLEU-{i + 1} {acc[i] / acc[4]:.4f}" for i in range(4))
        print(f"  {model:13s} {means}")


if __name__ == "__main__":
    main()
