"""End-to-end throughput of a run: 20,000 factual-knowledge rows (load, evaluate, write artifacts).

Usage: python bench/bench_factual_knowledge.py [--rows 20000] [--models 4] [--repeat 2] [--keep]

Generates a JSONL dataset of fmeval-style targets (``A<OR>B``) and answers (about 60% contain
a target), runs ``sonar_core.run`` with the factual_knowledge evaluator ``--repeat`` times in
this process, and prints rows/s of each whole run, by wall-clock time and by this process's CPU
time (on a machine shared with other work the CPU figure is the steadier one). The first run
also pays for importing the run machinery and loading the plugins, as a ``sonar run`` would.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

import sonar_core

CITIES = ["Berlin", "Paris", "Madrid", "Rome", "Lisbon", "Vienna", "Prague", "Warsaw", "Oslo", "Dublin",
          "Athens", "Bern", "Helsinki", "Budapest", "Sofia", "Riga", "Tallinn", "Vilnius", "Zagreb", "Ljubljana"]
FILLER = ("the answer to this question is well documented and the capital city mentioned in most "
          "references is as follows while other sources add historical context about").split()


def generate(path: Path, rows: int, models: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    cases = rows // models
    with path.open("w", encoding="utf-8") as handle:
        for case in range(cases):
            targets = rng.sample(CITIES, 2)
            for model in range(models):
                words = rng.choices(FILLER, k=rng.randint(20, 60))
                if rng.random() < 0.6:
                    words.insert(rng.randrange(len(words)), rng.choice(targets) + rng.choice([".", ",", ""]))
                else:
                    words.insert(rng.randrange(len(words)), rng.choice(CITIES))
                handle.write(json.dumps({
                    "test_case_key": f"case-{case}", "model_key": f"model-{model}",
                    "input": f"Which city is meant in question {case}?",
                    "expected_output": "<OR>".join(targets), "actual_output": " ".join(words),
                    "actual_duration": round(rng.uniform(0.2, 3.0), 3), "cost": round(rng.uniform(1e-4, 1e-2), 6),
                }) + "\n")


def _timed_run(data: Path, work: Path, run_id: str):
    """One ``sonar_core.run``: (result, wall seconds, CPU seconds of this process)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = sonar_core.run(dataset=str(data), evaluators=["factual_knowledge"], output_dir=str(work),
                            run_id=run_id)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert result.status == "success", result.message
    return result, elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2, help="runs in this process (the first pays the imports)")
    parser.add_argument("--keep", action="store_true", help="keep the generated data and result folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sonar-bench-"))
    data = work / "factual.jsonl"
    generate(data, args.rows, args.models)
    n = sum(1 for _ in data.open(encoding="utf-8"))
    print(f"rows: {n}  models: {args.models}  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for attempt in range(1, args.repeat + 1):
        result, elapsed, cpu = _timed_run(data, work, f"bench-{attempt}")
        what = "first run in this process (imports, plugin loading included)" if attempt == 1 else "next run, same process"
        print(f"end to end (load + evaluate + write artifacts), {what}:")
        print(f"  wall {elapsed:.2f} s -> {n / elapsed:,.0f} rows/s;  CPU {cpu:.2f} s -> {n / cpu:,.0f} rows per CPU second")
        events = [json.loads(line) for line in (result.run_dir / "journal.jsonl").read_text().splitlines()]
        times = {}
        for event in events:
            times.setdefault(event["message"], datetime.fromisoformat(event["timestamp"]))
        score_and_write = (times["evaluator scored"] - times["queuing item"]).total_seconds()
        print(f"  score + write evaluator artifacts: {score_and_write:.2f} s (journal)")
    load_started = time.perf_counter()
    sonar_core.load_dataset(data)
    print(f"dataset load + validation alone: {time.perf_counter() - load_started:.2f} s")
    print(f"result folders under: {work}")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
