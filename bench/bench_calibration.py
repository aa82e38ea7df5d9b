"""Benchmark: calibrating the seven built-in judges, cold and cached, on the local judge and on an endpoint.

Each figure is one whole process, ``sonar judges calibrate --json`` over every built-in judge
evaluator's calibration set (byop on examples/byop_calibration.jsonl), timed from start to exit:

* ``local-smollm2`` (SmolLM2-135M-Instruct on this machine's CPU), with an empty response cache
  (cold), then again (cached: the calibration cache answers, no model is loaded);
* the scripted test server (tests/judge_server.py) in its own process on 127.0.0.1 with a fixed
  latency per answer (default 200 ms), the judge configured with ``max_concurrency`` 16, cold then
  cached. The server answers ``--answer`` to everything: the figures measure time, not the judge.

    .venv/bin/python bench/bench_calibration.py [--latency 0.2] [--concurrency 16] [--skip-local]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from judge_server import served, server_stats, write_llm_configs  # noqa: E402

BYOP_SET = ROOT / "examples" / "byop_calibration.jsonl"


def calibrate(cache: Path, *extra: str) -> tuple[float, dict]:
    """One ``sonar judges calibrate`` process: its wall seconds and its JSON."""
    command = [str(Path(sys.executable).with_name("sonar")), "judges", "calibrate", "--json", "--llm-cache",
               str(cache), "--param", f"byop.calibration_set={BYOP_SET}", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"calibrate failed ({done.returncode}): {done.stderr or done.stdout}")
    return seconds, json.loads(done.stdout)


def report(name: str, cold: tuple[float, dict], cached: tuple[float, dict], calls: str = "") -> None:
    items = sum(r["items"] for r in cold[1]["results"])
    print(f"{name}: {len(cold[1]['results'])} judges, {items} items: cold {cold[0]:.1f} s, "
          f"cached {cached[0]:.2f} s ({cached[0] / cold[0]:.1%} of cold){calls}")
    for result in cold[1]["results"]:
        print(f"    {result['evaluator_id']:<22} {result['items']:>3} items  kappa {result['kappa']:+.2f}  "
              f"accuracy {result['accuracy']:.0%}  {result['seconds']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--answer", default="true", help="what the scripted server answers")
    parser.add_argument("--skip-local", action="store_true", help="only the endpoint")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.skip_local:
            cache = tmp / "local" / "llm-cache.sqlite"
            report("local-smollm2", calibrate(cache, "--judge", "local-smollm2"),
                   calibrate(cache, "--judge", "local-smollm2"))
        with served("--latency", str(args.latency), "--default", args.answer) as url:
            configs = write_llm_configs(tmp / "llm.yaml", url, max_concurrency=args.concurrency)
            cache = tmp / "server" / "llm-cache.sqlite"
            cold = calibrate(cache, "--llm-configs", str(configs))
            after_cold = server_stats(url)["calls"]
            cached = calibrate(cache, "--llm-configs", str(configs))
            again = server_stats(url)["calls"] - after_cold
            report(f"test server ({args.latency * 1000:.0f} ms, concurrency {args.concurrency})", cold, cached,
                   f"; {after_cold} calls cold, {again} cached")


if __name__ == "__main__":
    main()
