"""Benchmark: judge calls per second through Sonar's LLM client against the test judge server.

Runs tests/judge_server.py in its own process on 127.0.0.1 (as a real endpoint would be) with a
fixed latency per answer (default 200 ms), then asks N distinct questions (default 2,000) through
one ``LLMClient`` with ``max_concurrency`` 32, the SQLite response cache and a run journal on, as in
a run. The ideal is concurrency / latency (160 calls/s for 32 and 0.2 s); the goal is at least 90%
of it. A second pass over the same questions measures answers from the cache.

    .venv/bin/python bench/bench_judge_client.py [--calls 2000] [--latency 0.2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from sonar_core.journal import Journal
from sonar_core.llm import LLMClient, LLMConfig, LLMRequest, ResponseCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from judge_server import served, server_stats  # noqa: E402 - the test server lives with the tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    requests = [LLMRequest([{"role": "user", "content": f"Does answer {i} contain contact information?"}],
                           tags={"test_case_key": f"t{i}", "model_key": "bench"}) for i in range(args.calls)]
    with served("--default", "absent", "--latency", str(args.latency)) as base_url:
        with tempfile.TemporaryDirectory() as tmp:
            config = LLMConfig(key="bench-judge", base_url=base_url, model="scripted",
                               max_concurrency=args.concurrency, timeout=30)
            journal = Journal(Path(tmp) / "journal.jsonl")
            client = LLMClient(config, cache=ResponseCache(Path(tmp) / "cache.sqlite"), journal=journal)
            started = time.perf_counter()
            answers = client.complete_many(requests)
            seconds = time.perf_counter() - started
            stats = server_stats(base_url)
            assert all(a.text == "absent" for a in answers) and stats["calls"] == args.calls, stats
            ideal = args.concurrency / args.latency
            rate = args.calls / seconds
            print(f"{args.calls} calls, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
                  f"max in flight at the server {stats['max_in_flight']}")
            print(f"live:   {seconds:.2f} s, {rate:.1f} calls/s = {rate / ideal:.1%} of the ideal {ideal:.0f} "
                  f"calls/s (goal 90%)")
            started = time.perf_counter()
            again = client.complete_many(requests)
            cached = time.perf_counter() - started
            assert all(a.cached for a in again)
            print(f"cached: {cached:.2f} s, {args.calls / cached:.0f} answers/s, no call made")
            client.close()
            journal.close()


if __name__ == "__main__":
    main()
