"""Time and peak memory of a four-evaluator run as the dataset grows.

Usage: python bench/bench_lean_run.py [--rows 10000 50000 200000] [--repeat 1] [--profile N]

For each size, generates a JSONL dataset of summarisation-like rows (``summarization_data``:
references of 20-120 tokens answered by 3 models) with a text-matching condition per row,
a sprinkling of PII in the answers, durations and costs. Then ``sonar run`` with text
matching, ROUGE, PII leakage and BLEU runs in a child process (load, evaluate, write every
artifact); the script prints the child's wall time, rows/s, and peak RSS (``ru_maxrss`` of
that one child, from ``os.wait4``), so memory is that of the run alone.

``--profile N`` instead runs N rows in this process under cProfile and prints the top entries
by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from summarization_data import MODELS, _answer, _render, _words  # noqa: E402

EVALUATORS = ["text_matching", "rouge", "pii_leakage", "bleu"]
PII = [" Write to jane.doe@example.com for details.", " Call (555) 234-5678 today.",
       " My card is 4111 1111 1111 1111.", " SSN 123-45-6789 on file."]


def generate(path: Path, rows: int, seed: int = 3) -> None:
    """``rows`` JSONL rows: ``rows // 3`` references, each answered by the 3 models."""
    rng = random.Random(seed)
    written, case = 0, 0
    with path.open("w", encoding="utf-8") as handle:
        while written < rows:
            reference = _words(rng, rng.randint(20, 120))
            reference_text = _render(reference, rng)
            must, must_not = rng.choice(reference), rng.choice(reference)
            for model, keep in MODELS.items():
                if written == rows:
                    break
                answer = _render(_answer(reference, keep, rng), rng)
                if rng.random() < 0.05:
                    answer += rng.choice(PII)
                handle.write(json.dumps({
                    "test_case_key": f"tc{case}", "model_key": model, "input": f"Summarise document {case}.",
                    "expected_output": reference_text, "actual_output": answer,
                    "output_condition": f'"{must}" AND NOT "{must_not.upper()}"',
                    "actual_duration": round(rng.uniform(0.2, 3.0), 3), "cost": round(rng.uniform(1e-4, 1e-2), 6),
                }) + "\n")
                written += 1
            case += 1


def run_child(data: Path, out: Path, run_id: str) -> tuple[float, float, float]:
    """Run ``sonar run`` in a child; return (wall seconds, CPU seconds, peak RSS in MiB).

    CPU time (user + system) is reported beside wall time: on a shared machine it is the
    steadier of the two.
    """
    sonar = Path(sys.executable).parent / "sonar"
    args = [str(sonar), "run", "--no-progress", "-d", str(data), "-o", str(out), "--run-id", run_id]
    for evaluator in EVALUATORS:
        args += ["-e", evaluator]
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"run failed ({child.returncode}): {child.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def profile(rows: int, work: Path, top: int = 30) -> None:
    import sonar_core

    data = work / f"lean-{rows}.jsonl"
    generate(data, rows)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    result = sonar_core.run(dataset=str(data), evaluators=EVALUATORS, output_dir=str(work), run_id="profile")
    profiler.disable()
    print(f"{rows} rows in {time.perf_counter() - started:.2f} s under cProfile ({result.status})")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[10_000, 50_000, 200_000])
    parser.add_argument("--repeat", type=int, default=1, help="runs per size")
    parser.add_argument("--profile", type=int, metavar="N", help="profile one in-process run of N rows instead")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sonar-bench-lean-"))
    if args.profile:
        profile(args.profile, work)
        return
    print(f"evaluators: {', '.join(EVALUATORS)}; results under {work}")
    print(f"{'rows':>8} {'run':>4} {'wall s':>8} {'CPU s':>8} {'rows/s':>8} {'CPU us/row':>10} {'peak RSS MiB':>13}")
    for rows in args.rows:
        data = work / f"lean-{rows}.jsonl"
        generate(data, rows)
        for attempt in range(1, args.repeat + 1):
            elapsed, cpu, rss = run_child(data, work, f"run-{rows}-{attempt}")
            print(f"{rows:>8} {attempt:>4} {elapsed:>8.2f} {cpu:>8.2f} {rows / elapsed:>8,.0f} "
                  f"{1e6 * cpu / rows:>10.1f} {rss:>13.0f}", flush=True)


if __name__ == "__main__":
    main()
