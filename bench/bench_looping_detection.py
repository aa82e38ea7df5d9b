"""Benchmark: Looping Detection on 1 MB answers, total time and time per metric.

Scores three answers of about a megabyte each (a looping one: one sentence repeated; one
character repeated; random words with sentence ends) and prints, for each, the seconds spent
on each metric and in all, with the values. The longest repeated substring is the part that
would be quadratic without a suffix array; sentence splitting is the context's Punkt.

    .venv/bin/python bench/bench_looping_detection.py [--mb 1.0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time

from sonar_core.testing import make_context
from sonar_plugins.text.looping_detection import LoopingDetectionEvaluator

WORDS = "the answer river stone light cloud model token value paper table number green".split()


def answers(size: int) -> dict[str, str]:
    rng = random.Random(0)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS) + ("." if rng.random() < 0.1 else "")
        words.append(word)
        length += len(word) + 1
    period = "The answer is 42. "
    return {
        "looping sentence": period * (size // len(period)),
        "one character": "a" * size,
        "random words": " ".join(words)[:size],
    }


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()

    evaluator = LoopingDetectionEvaluator(LoopingDetectionEvaluator.validate_params({}), make_context())
    for name, text in answers(int(args.mb * 1_000_000)).items():
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            parts = {
                "unique_sentences": timed(evaluator.unique_sentences, text),
                "longest_repeated_substring": timed(evaluator.longest_repeated_substring, text),
                "compression_ratio": timed(evaluator.compression_ratio, text),
            }
            total, result = timed(evaluator.score, text)
            for key, (seconds, _) in parts.items():
                best[key] = min(best.get(key, float("inf")), seconds)
            best["total (score)"] = min(best.get("total (score)", float("inf")), total)
        print(f"{name}: {len(text):,} characters")
        for key, seconds in best.items():
            value = result.values.get(key)
            shown = f"  value {value:.6f}" if value is not None else ""
            print(f"  {key:28s} {seconds:7.3f} s{shown}")


if __name__ == "__main__":
    main()
