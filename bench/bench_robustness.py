"""Cost of the robustness building blocks, without asking any model.

Usage: python bench/bench_robustness.py [--prompts 1000] [--pairs 1000] [--bert-pairs 200]

Prints, for each built-in perturbator, prompts perturbed per second; the time of perturb: expansion
of a suite; word error rate pairs per second (answers of ~30 words); and BERTScore pairs per second
with the embedded all-MiniLM-L6-v2 (token vectors + greedy matching; the model load is timed apart).
Wall and CPU times; the best of --repeats runs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from sonar_core.dataset import Row  # noqa: E402
from sonar_core.perturbations import available, expand_perturbations, make_perturbator  # noqa: E402

WORDS = ("what is the capital of france paris city country river largest planet solar system who wrote "
         "hamlet play water boils degrees celsius sea level light travels kilometres second").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "?"


def best(fn, repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--bert-pairs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    prompts = [sentence(rng, rng.randint(6, 20)) for _ in range(args.prompts)]

    print(f"perturbators, {args.prompts} prompts of 6-20 words:")
    for name in available():
        perturbator = make_perturbator(name)
        wall, cpu = best(lambda: [perturbator.apply(p, np.random.default_rng(i)) for i, p in enumerate(prompts)],
                         args.repeats)
        print(f"  {name:<22} {args.prompts / wall:>10,.0f} prompts/s  (wall {wall * 1000:.1f} ms, cpu {cpu * 1000:.1f} ms)")

    suite = [Row(key=f"tc{i}", test_case_key=f"tc{i}", input=p) for i, p in enumerate(prompts)]
    config = [{"perturbator": "butter_finger", "seed": 7}, {"perturbator": "base64"}]
    wall, cpu = best(lambda: expand_perturbations(suite, config), args.repeats)
    print(f"perturb: expansion, {len(suite)} test cases x 2 entries: wall {wall * 1000:.1f} ms, cpu {cpu * 1000:.1f} ms")

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))
    from robustness.bertscore import bertscore, encode_tokens
    from robustness.wer import word_error_rate

    answers = [sentence(rng, 30) for _ in range(args.pairs * 2)]
    refs, hyps = answers[::2], answers[1::2]
    wall, cpu = best(lambda: [word_error_rate([r], [h]) for r, h in zip(refs, hyps)], args.repeats)
    print(f"word error rate, {args.pairs} pairs of 30-word answers: {args.pairs / wall:,.0f} pairs/s "
          f"(wall {wall * 1000:.1f} ms, cpu {cpu * 1000:.1f} ms)")

    from sonar_core.models import get_store
    from sonar_plugins.robustness.loaders import load_token_encoder

    started = time.perf_counter()
    model, tokenizer = load_token_encoder(get_store(), "all-MiniLM-L6-v2")
    print(f"BERTScore model load (all-MiniLM-L6-v2): {time.perf_counter() - started:.2f} s")
    texts = answers[:args.bert_pairs * 2]

    def score() -> None:
        vectors = encode_tokens(model, tokenizer, texts)
        for k in range(args.bert_pairs):
            bertscore(vectors[2 * k], vectors[2 * k + 1])

    wall, cpu = best(score, args.repeats)
    print(f"BERTScore, {args.bert_pairs} pairs of 30-word answers (encode + match): {args.bert_pairs / wall:,.0f} "
          f"pairs/s (wall {wall:.2f} s, cpu {cpu:.2f} s)")


if __name__ == "__main__":
    main()
