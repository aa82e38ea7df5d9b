"""Benchmark: the host pipeline's throughput against the test server, and a fully cached rerun.

Runs tests/judge_server.py in its own process on 127.0.0.1 with a fixed latency per answer
(default 200 ms) and asks a test suite of N questions (default 1,000) of one ``openai_chat`` host
with ``max_concurrency`` 32, through the whole pipeline stage of a run: item source, host
assigner, host worker with the SQLite response cache and the run journal, answers persisted per
batch, the produced dataset written (JSON + CSV). The ideal is concurrency / latency (160 items/s
for 32 and 0.2 s); the goal is at least 90% of it. A second run over the same suite, in a new run
folder with the same cache, is answered entirely from the cache (goal: under 2 s for 1,000 items).

    .venv/bin/python bench/bench_pipeline.py [--items 1000] [--latency 0.2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from sonar_core.hosts.factory import HostFactoryServices
from sonar_core.hosts.registry import build_hosts
from sonar_core.journal import Journal
from sonar_core.llm import ResponseCache
from sonar_core.execution.pipeline import run_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from judge_server import served, server_stats  # noqa: E402 - the test server lives with the tests


def _once(suite: Path, run_dir: Path, cache_path: Path, base_url: str, concurrency: int):
    run_dir.mkdir(parents=True)
    journal = Journal(run_dir / "journal.jsonl")
    cache = ResponseCache(cache_path)
    hosts = build_hosts([{"key": "bench", "kind": "openai_chat", "base_url": base_url, "model": "scripted",
                          "max_concurrency": concurrency, "timeout": 30}],
                        HostFactoryServices(journal=journal, cache=cache, device="cpu"))
    started = time.perf_counter()
    result = run_pipeline(suite, hosts, run_dir, journal)
    seconds = time.perf_counter() - started
    hosts.close()
    cache.close()
    journal.close()
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    with served("--default", "Paris", "--latency", str(args.latency)) as base_url:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            suite = tmp / "suite.jsonl"
            suite.write_text("".join(json.dumps({"test_case_key": f"q{i}", "input": f"What is question {i} about?",
                                                 "expected_output": "Paris"}) + "\n" for i in range(args.items)),
                             encoding="utf-8")
            live, seconds = _once(suite, tmp / "run1", tmp / "cache.sqlite", base_url, args.concurrency)
            stats = server_stats(base_url)
            assert live.counts["bench"]["fetched"] == args.items and stats["calls"] == args.items, (live.counts, stats)
            ideal = args.concurrency / args.latency
            rate = args.items / seconds
            print(f"{args.items} items, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
                  f"max in flight at the server {stats['max_in_flight']}")
            print(f"live:   {seconds:.2f} s, {rate:.1f} items/s = {rate / ideal:.1%} of the ideal {ideal:.0f} "
                  f"items/s (goal 90%)")
            cached, cached_seconds = _once(suite, tmp / "run2", tmp / "cache.sqlite", base_url, args.concurrency)
            stats = server_stats(base_url)
            assert cached.counts["bench"]["cached"] == args.items and stats["calls"] == args.items, stats
            print(f"cached: {cached_seconds:.2f} s for {args.items} items, {args.items / cached_seconds:.0f} items/s "
                  f"(goal under 2 s for 1,000), server calls unchanged ({stats['calls']})")


if __name__ == "__main__":
    main()
