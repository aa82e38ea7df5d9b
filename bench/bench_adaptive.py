"""Benchmark: adaptive concurrency against a fixed limit, on an endpoint that takes only so many calls at once.

The scripted ragas judge (tests/ragas_judge.py on tests/judge_server.py's server) runs in its own process
on 127.0.0.1 with a fixed latency per answer (default 100 ms) and the fault ``max_in_flight_429``: a call
that arrives while ``--server-limit`` calls (default 6) are being answered gets a 429 at once, without
``Retry-After`` unless ``--retry-after`` is given (a provider's concurrent-request limit).

The run: Sonar's RAGAS faithfulness evaluator on ``--cases`` test cases x 2 models (default 100: 200
rows, about two judge calls a row), with a fresh response cache, the judge at ``max_concurrency``
``--concurrency`` (default 16) and its default retries (5, exponential backoff with jitter from 0.5 s).
Twice per repeat: ``adaptive_concurrency: false`` (the fixed limit) and ``true`` (AIMD,
docs/concurrency.md), each against a fresh server. Printed per mode: wall time of the run, the
server's 429s, the judge calls that failed after every retry (their rows cannot be scored), and for
the adaptive run the range of the limit (run.json's ``concurrency_limit``).

    .venv/bin/python bench/bench_adaptive.py [--cases 100] [--latency 0.1] [--server-limit 6] [--concurrency 16]
                                             [--retry-after SECONDS] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from bench_ragas import make_rows  # noqa: E402 - the same RAG rows as bench_ragas.py
from judge_server import served, server_stats  # noqa: E402 - the test server lives with the tests


def serve(dataset: str, latency: float, limit: int, retry_after: str | None) -> None:
    """The server process: prints its base URL, serves until stdin closes."""
    from judge_server import JudgeServer
    from ragas_judge import RagasJudge

    rows = json.loads(Path(dataset).read_text())
    with JudgeServer(default=RagasJudge(rows), latency=latency, keep_bodies=False, max_in_flight_429=limit,
                     retry_after=retry_after) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


def run_once(tmp: Path, dataset: Path, base_url: str, concurrency: int, adaptive: bool, name: str) -> dict:
    import sonar_core
    from sonar_core import names

    configs = tmp / f"{name}.yaml"
    configs.write_text(f"default_judge: bench\nllms:\n  bench:\n    base_url: {base_url}\n    model: scripted\n"
                       f"    max_concurrency: {concurrency}\n    timeout: 60\n"
                       f"    adaptive_concurrency: {'true' if adaptive else 'false'}\n", encoding="utf-8")
    started = time.perf_counter()
    result = sonar_core.run(dataset=str(dataset), evaluators=["faithfulness"], output_dir=str(tmp / name),
                            run_id="r", llm_configs=str(configs), llm_cache=str(tmp / f"{name}.sqlite"))
    seconds = time.perf_counter() - started
    assert result.status == "success", result.message
    used = json.loads((result.run_dir / names.RUN_JSON).read_text())["llm"]["used"]["bench"]
    stats = server_stats(base_url)
    return {"seconds": seconds, "calls": stats["calls"], "429s": stats["over_limit"],
            "max_in_flight": stats["max_in_flight"], "failed": used["failed"], "requests": used["requests"],
            "range": used.get("concurrency_limit")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--server-limit", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--retry-after", default=None, help="the 429's Retry-After (seconds); none by default")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency, args.server_limit, args.retry_after)
        return

    import sonar_plugins.ragas.adapter  # noqa: F401 - warm the imports before timing

    rows = make_rows(args.cases)
    server_args = ["--serve", "", "--latency", str(args.latency), "--server-limit", str(args.server_limit)]
    if args.retry_after is not None:
        server_args += ["--retry-after", args.retry_after]
    results: dict[str, list[dict]] = {"fixed": [], "adaptive": []}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        dataset = tmp / "rows.json"
        dataset.write_text(json.dumps(rows), encoding="utf-8")
        server_args[1] = str(dataset)
        for repeat in range(args.repeats):
            for mode in ("fixed", "adaptive"):
                with served(*server_args, script=__file__) as url:
                    results[mode].append(run_once(tmp, dataset, url, args.concurrency, mode == "adaptive",
                                                  f"{mode}{repeat}"))
    print(f"{len(rows)} rows ({args.cases} cases x 2 models), RAGAS faithfulness, judge latency "
          f"{args.latency * 1000:.0f} ms, server answers 429 above {args.server_limit} in flight "
          f"(Retry-After: {args.retry_after or 'none'}), max_concurrency {args.concurrency}, {args.repeats} repeat(s)")
    for mode, runs in results.items():
        median = statistics.median(r["seconds"] for r in runs)
        each = "; ".join(f"{r['seconds']:.2f} s, {r['calls']} calls, {r['429s']} 429s, {r['failed']} of "
                         f"{r['requests']} requests failed" + (f", limit {r['range']['min']}-{r['range']['max']}"
                                                               if r["range"] else "") for r in runs)
        print(f"{mode:>8} (adaptive_concurrency: {'true' if mode == 'adaptive' else 'false'}): "
              f"median {median:.2f} s | {each}")


if __name__ == "__main__":
    main()
