"""Fixed cost of a small run: wall time and peak memory of whole ``sonar`` processes.

Usage: python bench/bench_startup.py [--repeat 7] [--python PYTHON] [--source DIR]

Times, as separate processes (start-up, imports, plugin loading, the run, every artifact):

* ``sonar run`` of ROUGE on a one-row dataset (the issue's "one-row ROUGE run");
* ``sonar run`` of text matching, PII leakage and ROUGE on the same row;
* ``sonar evaluators --json``.

Each is run ``--repeat`` times after one warm-up; the median wall seconds and the median peak RSS
(``ru_maxrss`` of the child, from ``os.wait4``) are printed. The one-row ROUGE values are checked
against ``rouge_score.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)`` (parity).

``--source DIR`` runs another checkout of Sonar (e.g. ``git archive <commit> | tar -x -C DIR``) with
the same interpreter: DIR goes first on PYTHONPATH, with ``DIR/sonar_plugins`` made a link to
``DIR/plugins``, to measure a "before". The figures for a report come from ``farm-bench``, e.g.
``farm-bench -n 9 -- .venv/bin/python -m sonar_core.cli run --dataset one.jsonl -e rouge --no-progress``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROW = {"input": "What is the capital of France?", "model_key": "m",
       "actual_output": "The capital of France is Paris, a city on the Seine.",
       "expected_output": "Paris is the capital of France.", "output_condition": '"Paris"'}


def run_child(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{' '.join(args)} failed: {child.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def measure(name: str, make_args, repeat: int, env: dict[str, str]) -> None:
    run_child(make_args(-1), env)  # warm-up: the OS file cache, jinja's bytecode cache
    samples = [run_child(make_args(i), env) for i in range(repeat)]
    walls, peaks = [s[0] for s in samples], [s[1] for s in samples]
    print(f"{name:<42} wall {statistics.median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f})  "
          f"peak {statistics.median(peaks):.1f} MiB")


def rouge_parity(run_dir: Path) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    folder = next(run_dir.glob("explainer_*RougeEvaluator*"))
    row = json.loads((folder / "global_llm_eval_results" / "application_json" / "explanation.json")
                     .read_text(encoding="utf-8"))["results"][0]
    expected = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True).score(ROW["expected_output"],
                                                                                   ROW["actual_output"])
    same = all(row[f"rouge_{k}"] == expected[f"rouge{k.upper() if k == 'l' else k}"].fmeasure for k in ("1", "2", "l"))
    print(f"rouge-score parity on the row: {'identical' if same else 'DIFFERENT'}")
    if not same:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--source", type=Path, help="another Sonar checkout to measure (a 'before')")
    options = parser.parse_args()
    env = dict(os.environ)
    if options.source:
        link = options.source / "sonar_plugins"
        if not link.exists():
            link.symlink_to(options.source / "plugins", target_is_directory=True)
        env["PYTHONPATH"] = str(options.source) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        data = work_dir / "one.jsonl"
        data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
        sonar = [options.python, "-m", "sonar_core.cli"]

        def run_args(*evaluators: str):
            def make(i: int) -> list[str]:
                args = [*sonar, "run", "--dataset", str(data), "--no-progress", "-o", str(work_dir / "out"),
                        "--run-id", f"{'-'.join(evaluators)}-{i + 1}"]
                for evaluator in evaluators:
                    args += ["-e", evaluator]
                return args
            return make

        measure("one-row ROUGE run", run_args("rouge"), options.repeat, env)
        measure("one-row text_matching + pii_leakage + ROUGE", run_args("text_matching", "pii_leakage", "rouge"),
                options.repeat, env)
        measure("sonar evaluators --json", lambda i: [*sonar, "evaluators", "--json"], options.repeat, env)
        rouge_parity(work_dir / "out" / "rouge-1")


if __name__ == "__main__":
    main()
