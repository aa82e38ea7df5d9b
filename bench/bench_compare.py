"""Benchmark: ``sonar compare`` of two 200,000-row runs of four evaluators.

Usage: python bench/bench_compare.py [--rows 200000] [--changed 0.02] [--keep DIR]

Generates bench_lean_run's summarisation-like dataset (3 models; text matching, ROUGE, PII
leakage, BLEU), and a second one where a share (``--changed``) of the answers is replaced by
another model's answer to the same test case, then runs both with ``sonar run`` (child
processes; not timed here, bench_lean_run.py times runs) and times, in this process:

- reading both result folders (run.json, each evaluator's ``.jay`` and metrics_meta);
- the comparison (intervals of every metric and model on both sides, the paired tests, Holm, flips);
- writing the comparison folder (HTML, JSON, markdown);

and then ``sonar compare`` end to end in a child process (interpreter start included).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_lean_run import generate, run_child  # noqa: E402


def changed_copy(source: Path, target: Path, share: float, seed: int = 11) -> int:
    """``source`` with ``share`` of its rows' answers swapped for another row's of the same test case."""
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    by_case: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_case.setdefault(row["test_case_key"], []).append(i)
    rng = random.Random(seed)
    changed = 0
    for i, row in enumerate(rows):
        if rng.random() < share:
            others = [j for j in by_case[row["test_case_key"]] if j != i]
            if others:
                row["actual_output"] = rows[rng.choice(others)]["actual_output"] + " (revised)"
                changed += 1
    target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--changed", type=float, default=0.02)
    parser.add_argument("--keep", type=Path, help="reuse/keep the runs in this folder")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="sonar-bench-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in ("before", "after"):
        run_dir = work / f"{name}-{args.rows}"
        if not (run_dir / "run.json").is_file():
            data = work / f"{name}-{args.rows}.jsonl"
            if name == "before":
                generate(data, args.rows)
            else:
                print(f"answers changed: {changed_copy(work / f'before-{args.rows}.jsonl', data, args.changed)}")
            elapsed, _, _ = run_child(data, work, run_dir.name)
            print(f"run {name}: {elapsed:.1f} s")
        runs.append(run_dir)

    from sonar_core.artifacts.comparison_dir import write_comparison
    from sonar_core.artifacts.run_reader import read_run
    from sonar_core.findings.comparison import compare_runs

    timings = []
    started, cpu = time.perf_counter(), time.process_time()
    a, b = read_run(runs[0]), read_run(runs[1])
    timings.append((time.perf_counter() - started, time.process_time() - cpu))
    started, cpu = time.perf_counter(), time.process_time()
    data = compare_runs(a, b)
    timings.append((time.perf_counter() - started, time.process_time() - cpu))
    started, cpu = time.perf_counter(), time.process_time()
    write_comparison(data, work / "comparison")
    timings.append((time.perf_counter() - started, time.process_time() - cpu))
    tests = sum(1 for ev in data.evaluators for e in ev.metrics if e.test)
    flips = sum(len(e.flips.pass_to_fail) + len(e.flips.fail_to_pass)
                for ev in data.evaluators for e in ev.metrics)
    print(f"{args.rows} rows per run, {len(data.evaluators)} evaluators, {tests} paired tests, {flips} flips, "
          f"{data.regressions} regressions")
    # CPU seconds beside wall seconds: on a shared machine CPU time is the steadier of the two.
    for label, (wall, cpu) in zip(("read both runs", "compare", "write folder"), timings):
        print(f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"total: {sum(w for w, _ in timings):.2f} s wall, {sum(c for _, c in timings):.2f} s CPU")
    sonar = Path(sys.executable).parent / "sonar"
    started = time.perf_counter()
    subprocess.run([str(sonar), "compare", str(runs[0]), str(runs[1]), "-o", str(work / "comparison-cli")],
                   check=False, stderr=subprocess.DEVNULL)
    print(f"sonar compare (child process, end to end): {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
