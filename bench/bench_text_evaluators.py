"""Rows/s of the six pure-text evaluators on a generated 10,000-row, 3-model dataset.

Usage: python bench/bench_text_evaluators.py [--rows 10000] [--only ID ...]

The rows come from ``summarization_data.make_rows`` (sentence-like answers and references of
20-120 tokens) and are enriched so every evaluator has its inputs: a retrieved context, a
label-like expected answer for classification (on its own copy of the rows), a sprinkling of
PII and secrets, base64-encoded answers under an encoding category, and looping answers.
Each evaluator runs alone through ``sonar_core.run`` (load, evaluate, write every artifact);
the script prints end-to-end rows/s per evaluator and the evaluation time from run.json.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from summarization_data import make_rows  # noqa: E402

import sonar_core  # noqa: E402

EVALUATORS = ["sensitive_data_leakage", "encoding_guardrail", "bleu", "rouge", "classification",
              "looping_detection"]
LABELS = ["positive", "negative", "neutral"]


def build(rows: int, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    records = []
    for i, row in enumerate(make_rows(rows)):
        answer = row.actual_output
        categories = ["bench"]
        roll = rng.random()
        if roll < 0.05:
            answer += " The key is AKIAIOSFODNN7EXAMPLE and mail ops@example.com."
        elif roll < 0.10:
            answer += " " + base64.b64encode(f"card 4111 1111 1111 1111 for case {i}".encode()).decode()
            categories.append("base64")
        elif roll < 0.13:
            answer = " ".join([answer.split(".")[0] + "."] * 8)  # a loop
        records.append({
            "test_case_key": row.test_case_key, "model_key": row.model_key, "input": row.input or "Summarize.",
            "expected_output": row.expected_output, "actual_output": answer,
            "context": [row.expected_output], "categories": categories,
            "actual_duration": round(rng.uniform(0.2, 2.0), 3), "cost": round(rng.uniform(1e-4, 1e-3), 6),
        })
    return records


def as_classification(records: list[dict], seed: int = 5) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for r in records:
        truth = LABELS[hash(r["test_case_key"]) % 3]
        guess = truth if rng.random() < 0.7 else rng.choice(LABELS)
        out.append({**r, "expected_output": truth, "actual_output": f" {guess.upper() if rng.random() < .2 else guess}"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--only", nargs="*", default=EVALUATORS)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sonar-bench-text-"))
    records = build(args.rows)
    text_data = work / "text.jsonl"
    text_data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    cls_data = work / "classification.jsonl"
    cls_data.write_text("".join(json.dumps(r) + "\n" for r in as_classification(records)), encoding="utf-8")
    print(f"{len(records)} rows, 3 models; results under {work}")
    print(f"{'evaluator':<24} {'end-to-end s':>12} {'rows/s':>10} {'evaluate+write s':>17}")
    for evaluator in args.only:
        data = cls_data if evaluator == "classification" else text_data
        started = time.perf_counter()
        result = sonar_core.run(dataset=str(data), evaluators=[evaluator], output_dir=str(work), run_id=evaluator)
        elapsed = time.perf_counter() - started
        assert result.status == "success", result.message
        job = json.loads((result.run_dir / "run.json").read_text())["result"]["executed_explainers"][0]
        print(f"{evaluator:<24} {elapsed:>12.2f} {len(records) / elapsed:>10,.0f} {job['duration']:>17.2f}")


if __name__ == "__main__":
    main()
