"""``sonar redteam`` on a 10,000-attack static suite against a Python host: the whole process, timed.

Usage:
  python bench/bench_redteam.py [--attacks 10000] [--runs 3] [--dir /tmp/bench_redteam]

The suite is the bundled corpus's 66 attacks copied (new ids, same wording, planted canaries and markers
drawn per copy) up to ``--attacks`` attacks, sent as they are (``direct``) to the demo's naive target
(``sonar_core.demo.redteam_targets:naive``, a Python function: no model is loaded). Each run is one
``sonar redteam CONFIG --json`` process timed from outside: start-up, expanding and writing the suite,
asking the host every test case (a conversation each where a system prompt is planted), the four
detectors, every artifact of the result folder, reading the outcomes back and the red-team findings.
The goal is under 60 s. Prints each run's seconds, the median, and the findings' totals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "sonar_core" / "redteam" / "data" / "sonar_attacks.jsonl"


def make_suite(path: Path, attacks: int) -> None:
    """``attacks`` attacks: the corpus's rows in turn, each copy with its own id."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    header, rows = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({**header, "attack_set": "bench"}) + "\n")
        for i in range(attacks):
            row = rows[i % len(rows)]
            handle.write(json.dumps({**row, "id": f"{row['id']}-{i:05d}"}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attacks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_redteam"))
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    make_suite(args.dir / "attacks.jsonl", args.attacks)
    config = args.dir / "bench.yaml"
    config.write_text(json.dumps({
        "name": "bench", "output_dir": str(args.dir / "out"), "redteam": {"suites": ["attacks.jsonl"]},
        "hosts": [{"key": "naive", "kind": "python", "callable": "sonar_core.demo.redteam_targets:naive",
                   "chat": True, "deterministic": True}]}), encoding="utf-8")
    sonar = str(Path(sys.executable).parent / "sonar")
    seconds = []
    for run in range(args.runs):
        started = time.perf_counter()
        done = subprocess.run([sonar, "redteam", str(config), "--run-id", f"r{run}", "--json", "--no-progress"],
                              capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"sonar redteam failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
        found = json.loads(done.stdout)
        rate = found["attack_success_rate"]["naive"]
        print(f"run {run + 1}: {seconds[-1]:.1f} s; {rate['n'] + rate['not_assessed']} attacks, "
              f"{rate['hits']} succeeded, {rate['not_assessed']} not assessed; "
              f"{found['over_refusal']['naive']['n']} controls", flush=True)
    print(f"median {statistics.median(seconds):.1f} s over {args.runs} runs of {args.attacks} attacks (goal: under 60 s)")


if __name__ == "__main__":
    main()
