"""Rows/s of a run on the local executor and on Ray on this machine, and the per-shard cost behind the
scaling model of docs/scale-out.md.

    python bench/bench_ray.py [--rows 50000] [--embedding-rows 50000] [--cpus 2] [--shard-rows 2048]
    python bench/bench_ray.py --actors 1 2 [--embedding-rows 1500] [--shard-rows 100] [--local]

Two runs, each local then on a local Ray instance (``ray.init(num_cpus=--cpus)``), same rows:
- text: four rule-based evaluators (sensitive_data_leakage, encoding_guardrail, bleu, rouge) on
  the generated rows of bench_text_evaluators.py;
- embedding: answer_semantic_similarity (all-MiniLM-L6-v2) on the same rows.
For each it prints end-to-end seconds and rows/s (dataset rows x evaluators / seconds), the Ray
overhead (Ray seconds / local seconds), and from the Ray run's journal: shards, the mean seconds a
worker spent per shard (c) and the driver's seconds per shard beyond the workers' (o, dispatch,
transfer, writing what came back). The scaling model: T(N) ~ T_fixed + S * max(c / N, o), for S
shards on N workers (docs/scale-out.md). Checks that the Ray artifacts equal the local ones.

``--actors N [N ...]``: an embedding run alone (answer_semantic_similarity and
groundedness_semantic_similarity on 1,500 rows by default), on Ray with ``ray_model_actors`` N
(each actor one thread), each count in turn (and locally first with ``--local``), in batches and
shards of ``--shard-rows`` rows so the actors share the work. For each it prints the run's wall
seconds, the evaluators' (from the first one's ``queuing evaluator`` event to the last one's last
shard), the CPU seconds of this process and its Ray instance, and the 1-minute load average (mean
and max, sampled every second: the figures of a shared machine are not those of a quiet one); then the
speed-up over the first count, and whether every run's artifacts equal the first one's apart from
times (bench/compare_runs.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_text_evaluators import build  # noqa: E402
from compare_runs import compare  # noqa: E402

import sonar_core  # noqa: E402

TEXT = ["sensitive_data_leakage", "encoding_guardrail", "bleu", "rouge"]
EMBEDDING = ["answer_semantic_similarity"]


def _shards(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()
            if '"shard"' in line and '"measured batch quality"' in line]


def _one(name: str, data: Path, evaluators: list[str], rows: int, work: Path, shard_rows: int) -> None:
    from sonar_core.models.embeddings import _PROCESS_CACHE

    common = dict(dataset=str(data), evaluators=evaluators, run_id=name, calibrate=False)
    _PROCESS_CACHE.clear()
    started = time.perf_counter()
    local = sonar_core.run(output_dir=str(work / "local"), **common)
    local_s = time.perf_counter() - started
    started = time.perf_counter()
    on_ray = sonar_core.run(output_dir=str(work / "ray"), executor="ray", ray_shard_rows=shard_rows, **common)
    ray_s = time.perf_counter() - started
    assert local.status == on_ray.status == "success", (local.message, on_ray.message)
    report = compare(local.run_dir, on_ray.run_dir, aliases=[(str(work / "local"), str(work / "ray"))])
    report.pop("journal.jsonl", None)
    shards = _shards(on_ray.run_dir)
    worker = sum(e["seconds"] for e in shards)
    c = worker / max(len(shards), 1)
    scored = len(evaluators) * rows
    print(f"{name}: {rows:,} rows x {len(evaluators)} evaluator(s)")
    print(f"  local  {local_s:8.1f} s  {scored / local_s:10,.0f} rows/s")
    print(f"  ray    {ray_s:8.1f} s  {scored / ray_s:10,.0f} rows/s   overhead x{ray_s / local_s:.2f}")
    print(f"  shards {len(shards)}  worker seconds per shard c = {c:.3f}  "
          f"driver seconds per shard beyond the workers o = {max(ray_s - worker / 2, 0) / max(len(shards), 1):.3f}"
          f" (2 workers)")
    print(f"  artifacts {'identical' if not report else 'DIFFER: ' + ', '.join(list(report)[:5])}")


#: The embedding evaluators of ``--actors``: their texts differ (whole answers and expected answers; the
#: answers' and contexts' sentences), so the second does model work of its own.
ACTORS_EMBEDDING = ["answer_semantic_similarity", "groundedness_semantic_similarity"]


def _evaluator_seconds(run_dir: Path, evaluators: list[str]) -> float:
    """From the first evaluator's ``queuing evaluator`` event to the last evaluator's last shard."""
    events = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    times = [datetime.fromisoformat(e["timestamp"]) for e in events
             if e.get("evaluator") in evaluators and e["message"] in ("queuing evaluator", "measured batch quality")]
    return (times[-1] - times[0]).total_seconds()


def _tree_cpu() -> dict[tuple[int, float], float]:
    """(pid, start time) -> CPU seconds (user + system) of this process and every process below it (a local
    Ray instance's raylet, workers and actors are this process's descendants)."""
    import psutil

    me = psutil.Process()
    seen = {}
    for process in [me, *me.children(recursive=True)]:
        try:
            with process.oneshot():
                t = process.cpu_times()
                seen[(process.pid, process.create_time())] = t.user + t.system
        except psutil.Error:  # ended meanwhile
            continue
    return seen


class _Sampler:
    """While a measurement runs, every second: the 1-minute load average, and each process's CPU seconds.

    An actor's process ends with its pool (before the run returns), and its CPU seconds with it, so they are
    sampled while it lives: the CPU seconds of a measurement are, per process, the last value seen minus the
    value at the start (0 for a process started since); at most the last second of an ended process is missed.
    """

    def __init__(self) -> None:
        import threading

        self.loads = [os.getloadavg()[0]]
        self.start = _tree_cpu()
        self.last = dict(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            self.loads.append(os.getloadavg()[0])
            self.last.update(_tree_cpu())

    def stop(self) -> tuple[float, float, float]:
        """(CPU seconds, mean load average, max load average) of the measurement."""
        self._stop.set()
        self._thread.join()
        self.loads.append(os.getloadavg()[0])
        self.last.update(_tree_cpu())
        cpu = sum(value - self.start.get(key, 0.0) for key, value in self.last.items())
        return cpu, sum(self.loads) / len(self.loads), max(self.loads)


def _actors(args: argparse.Namespace, work: Path) -> None:
    """The embedding run on 1, 2, ... actors (and locally): seconds, CPU seconds, load, speed-up, and
    whether the artifacts are byte-identical apart from times."""
    from sonar_core.models.embeddings import _PROCESS_CACHE

    data = work / "embedding.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in build(args.embedding_rows)), encoding="utf-8")
    common = dict(dataset=str(data), evaluators=ACTORS_EMBEDDING, run_id="actors", calibrate=False,
                  batch_size=args.shard_rows)
    runs: list[tuple[str, Path, float, float]] = []
    print(f"embedding: {args.embedding_rows:,} rows x {', '.join(ACTORS_EMBEDDING)}; shards and batches of "
          f"{args.shard_rows} rows; ray.init(num_cpus={args.cpus}); {os.cpu_count()} CPUs; "
          f"load average before {os.getloadavg()[0]:.1f}")
    plan = (["local"] if args.local else []) + [f"{n} actor(s)" for n in args.actors]
    for i, name in enumerate(plan):
        out = work / f"{i}-{name.split()[0]}"
        _PROCESS_CACHE.clear()  # each run encodes its texts afresh
        sampler = _Sampler()
        started = time.perf_counter()
        if name == "local":
            result = sonar_core.run(output_dir=str(out), **common)
        else:
            result = sonar_core.run(output_dir=str(out), executor="ray", ray_shard_rows=args.shard_rows,
                                    ray_model_actors=int(name.split()[0]), **common)
        seconds = time.perf_counter() - started
        cpu, mean, peak = sampler.stop()
        assert result.status == "success", result.message
        runs.append((name, result.run_dir, seconds, _evaluator_seconds(result.run_dir, ACTORS_EMBEDDING)))
        print(f"  {name:12} run {seconds:7.1f} s  evaluators {runs[-1][3]:7.1f} s  CPU {cpu:7.1f} s  "
              f"{args.embedding_rows * len(ACTORS_EMBEDDING) / seconds:6.1f} rows/s  "
              f"load average mean {mean:.1f} max {peak:.1f}", flush=True)
    first = next(r for r in runs if r[0] != "local")
    best = {name: (min(r[2] for r in runs if r[0] == name), min(r[3] for r in runs if r[0] == name))
            for name, *_ in runs}
    for name, (seconds, evaluators) in best.items():
        if name != first[0]:
            print(f"  {name} vs {first[0]} (best of each): x{best[first[0]][0] / seconds:.2f} faster (run), "
                  f"x{best[first[0]][1] / evaluators:.2f} (evaluators)")
    for i, (name, run_dir, _, _) in enumerate(runs):
        if run_dir != first[1]:
            report = compare(first[1], run_dir, aliases=[(str(first[1].parent), str(run_dir.parent))])
            report.pop("journal.jsonl", None)
            print(f"  artifacts of run {i} ({name}) vs the first {first[0]} run: "
                  f"{'identical' if not report else 'DIFFER: ' + ', '.join(list(report)[:5])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--embedding-rows", type=int, default=None, help="default 50,000; 1,500 with --actors")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--shard-rows", type=int, default=None,
                        help="rows per shard (default 2048; 100 with --actors, also its batch size)")
    parser.add_argument("--actors", type=int, nargs="+",
                        help="the embedding run on this many actors, each in turn (repeat counts to interleave: 1 2 1 2)")
    parser.add_argument("--local", action="store_true", help="with --actors: a local run first, compared too")
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    work = Path(tempfile.mkdtemp(prefix="sonar-bench-ray-"))
    if args.actors:
        args.shard_rows, args.embedding_rows = args.shard_rows or 100, args.embedding_rows or 1500
        _actors(args, work)
        ray.shutdown()
        return
    args.shard_rows, args.embedding_rows = args.shard_rows or 2048, args.embedding_rows or 50_000
    for name, rows, evaluators in (("text", args.rows, TEXT), ("embedding", args.embedding_rows, EMBEDDING)):
        data = work / f"{name}.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in build(rows)), encoding="utf-8")
        _one(name, data, evaluators, rows, work, args.shard_rows)
    ray.shutdown()


if __name__ == "__main__":
    main()
