"""Rows/s of a run on the local executor and on Ray on this machine, and the per-shard cost behind the
scaling model of docs/scale-out.md.

    python bench/bench_ray.py [--rows 50000] [--embedding-rows 50000] [--cpus 2] [--shard-rows 2048]

Two runs, each local then on a local Ray instance (``ray.init(num_cpus=--cpus)``), same rows:
- text: four rule-based evaluators (sensitive_data_leakage, encoding_guardrail, bleu, rouge) on
  the generated rows of bench_text_evaluators.py;
- embedding: answer_semantic_similarity (all-MiniLM-L6-v2) on the same rows.
For each it prints end-to-end seconds and rows/s (dataset rows x evaluators / seconds), the Ray
overhead (Ray seconds / local seconds), and from the Ray run's journal: shards, the mean seconds a
worker spent per shard (c) and the driver's seconds per shard beyond the workers' (o, dispatch,
transfer, writing what came back). The scaling model: T(N) ~ T_fixed + S * max(c / N, o), for S
shards on N workers (docs/scale-out.md). Checks that the Ray artifacts equal the local ones.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--embedding-rows", type=int, default=50_000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--shard-rows", type=int, default=2048)
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    work = Path(tempfile.mkdtemp(prefix="sonar-bench-ray-"))
    for name, rows, evaluators in (("text", args.rows, TEXT), ("embedding", args.embedding_rows, EMBEDDING)):
        data = work / f"{name}.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in build(rows)), encoding="utf-8")
        _one(name, data, evaluators, rows, work, args.shard_rows)
    ray.shutdown()


if __name__ == "__main__":
    main()
