"""What intervals and paired tests add to a four-evaluator text run (goal: under 10%).

Usage: python bench/bench_intervals.py [--rows 200000] [--resamples 2000]

The dataset is bench_lean_run's (summarisation-like rows answered by 3 models; text matching,
ROUGE, PII leakage and BLEU). The same run is made twice in this process:

- *with* statistics, as ``sonar run`` does: every leaderboard cell gets its interval and each
  evaluator its pairwise tests (``findings.confidence.annotate_board``) and the lead sentence
  (``lead_insight``); the time spent in those two is measured directly around each call;
- *without*: the runner's ``derive_findings`` is given no statistics settings, so the findings
  are exactly the ones Sonar wrote before intervals existed.

It prints both runs' wall and CPU seconds, the seconds (wall and CPU) spent computing intervals
and tests, and that time as a share of the run without them. On a shared machine the wall times of two
whole runs move by more than the difference being measured; the directly timed share is the
figure to quote, the two whole runs a check that nothing else changed.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_lean_run import EVALUATORS, generate  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap_resamples of the run")
    args = parser.parse_args()

    import sonar_core
    from sonar_core.execution import runner
    from sonar_core.findings import evaluator as findings_evaluator

    work = Path(tempfile.mkdtemp(prefix="sonar-bench-intervals-"))
    data = work / f"rows-{args.rows}.jsonl"
    generate(data, args.rows)
    print(f"{args.rows:,} rows, evaluators: {', '.join(EVALUATORS)}; bootstrap_resamples {args.resamples}; "
          f"results under {work}")

    spent: dict[str, float] = {}

    def timed(name, func):
        def wrapper(*a, **k):
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return func(*a, **k)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
                spent[f"{name} (CPU)"] = spent.get(f"{name} (CPU)", 0.0) + time.process_time() - cpu
        return wrapper

    original_annotate, original_lead = findings_evaluator.annotate_board, findings_evaluator.lead_insight
    original_derive = runner.derive_findings
    results = {}
    for mode in ("without", "with"):
        spent.clear()
        if mode == "with":
            findings_evaluator.annotate_board = timed("intervals and tests", original_annotate)
            findings_evaluator.lead_insight = timed("lead sentence", original_lead)
            runner.derive_findings = original_derive
        else:
            runner.derive_findings = lambda scored, trust, stats=None: original_derive(scored, trust, None)
        cpu, started = _cpu(), time.perf_counter()
        result = sonar_core.run(dataset=str(data), evaluators=EVALUATORS, output_dir=str(work), run_id=f"run-{mode}",
                                bootstrap_resamples=args.resamples)
        results[mode] = (time.perf_counter() - started, _cpu() - cpu, dict(spent))
        assert result.status == "success", result.message
    findings_evaluator.annotate_board, findings_evaluator.lead_insight = original_annotate, original_lead
    runner.derive_findings = original_derive

    print(f"{'run':>8} {'wall s':>8} {'CPU s':>8}")
    for mode, (wall, cpu, _) in results.items():
        print(f"{mode:>8} {wall:>8.2f} {cpu:>8.2f}")
    timings = results["with"][2]
    stats = sum(v for k, v in timings.items() if not k.endswith("(CPU)"))
    stats_cpu = sum(v for k, v in timings.items() if k.endswith("(CPU)"))
    base_wall, base_cpu = results["without"][0], results["without"][1]
    for name, seconds in timings.items():
        print(f"  {name}: {seconds:.2f} s")
    print(f"intervals and pairwise tests: {stats:.2f} s wall = {100 * stats / base_wall:.1f}% of the run without them "
          f"({base_wall:.2f} s); {stats_cpu:.2f} s CPU = {100 * stats_cpu / base_cpu:.1f}% of its CPU time "
          f"({base_cpu:.2f} s)")
    print(f"whole-run difference: {results['with'][0] - base_wall:+.2f} s wall, "
          f"{results['with'][1] - base_cpu:+.2f} s CPU")


if __name__ == "__main__":
    main()
