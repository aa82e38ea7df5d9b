"""Benchmark: Sonar's ROUGE evaluator against rouge-score's RougeScorer, row by row.

Generates N rows (default 10,000: N/3 references x 3 models, see summarization_data.py),
scores them (a) with ``RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True).score``
one row at a time and (b) with ``RougeEvaluator`` through ``sonar_core.testing.score_rows``,
asserts that every ROUGE-1/2/L F1 is identical (max absolute difference exactly 0.0), and
prints rows per second for each and the speed-up.

    .venv/bin/python bench/bench_rouge.py [--rows 10000] [--seed 0] [--no-stemmer]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rouge_score import rouge_scorer  # noqa: E402

from sonar_core.testing import score_rows  # noqa: E402
from sonar_plugins.summarization.rouge import RougeEvaluator  # noqa: E402
from summarization_data import make_rows  # noqa: E402

_KEYS = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_l": "rougeL"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-stemmer", action="store_true")
    args = parser.parse_args()
    use_stemmer = not args.no_stemmer

    rows = make_rows(args.rows, args.seed)
    n_refs = len({r.expected_output for r in rows})
    print(f"{len(rows)} rows, {n_refs} distinct references, use_stemmer={use_stemmer}")

    start = time.perf_counter()
    scorer = rouge_scorer.RougeScorer(list(_KEYS.values()), use_stemmer=use_stemmer)
    expected = [scorer.score(r.expected_output, r.actual_output) for r in rows]
    baseline_s = time.perf_counter() - start

    start = time.perf_counter()
    results = score_rows(RougeEvaluator, rows, use_stemmer=use_stemmer)
    ours_s = time.perf_counter() - start

    max_diff = 0.0
    for got, want in zip(results, expected):
        for key, theirs in _KEYS.items():
            max_diff = max(max_diff, abs(got.values[key] - want[theirs].fmeasure))
    assert max_diff == 0.0, f"scores differ: max abs diff {max_diff!r}"

    print(f"rouge-score RougeScorer.score, row by row: {baseline_s:8.3f} s  {len(rows) / baseline_s:10.0f} rows/s")
    print(f"sonar RougeEvaluator (score_rows):         {ours_s:8.3f} s  {len(rows) / ours_s:10.0f} rows/s")
    print(f"speed-up: {baseline_s / ours_s:.1f}x; max abs diff of F1 over all rows and metrics: {max_diff!r} (identical)")


if __name__ == "__main__":
    main()
