"""Calls saved by single-flight (issue 25): the quickstart's judge evaluators, judged by a scripted
endpoint (tests/judge_server.py) instead of the local model, with a fresh response cache, once with
single-flight and once without (each identical request its own call, as before).

    .venv/bin/python bench/bench_single_flight.py [--all-rows] [--latency 0.05] [--concurrency 8]

``--all-rows`` drops the quickstart's ``max_rows`` (every row of each judge's categories). Prints,
per mode, the endpoint's calls (calibration included), the requests answered by a call in flight,
and the calls saved.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]

from judge_server import JudgeServer, write_llm_configs  # noqa: E402
from sonar_core import api, names  # noqa: E402
from sonar_core.llm.client import LLMClient  # noqa: E402

JUDGES = {"contact_information", "language_mismatch", "sexism", "stereotypes", "summarization_judge", "byop",
          "fact_check"}


def _evaluators(all_rows: bool) -> list[dict]:
    config = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    entries = [dict(e) for e in config["evaluators"] if isinstance(e, dict) and e.get("id") in JUDGES]
    for entry in entries:
        if all_rows:
            entry.pop("max_rows", None)
        params = entry.get("params") or {}
        if "calibration_set" in params:
            params["calibration_set"] = str((REPO / "configs" / params["calibration_set"]).resolve())
    return entries


def _run(folder: Path, server: JudgeServer, evaluators: list[dict], concurrency: int, single_flight: bool) -> dict:
    original = LLMClient._fetch_once
    if not single_flight:
        LLMClient._fetch_once = lambda self, request, params, key: self._fetch(request, params, key)
    try:
        server.reset()
        (folder / f"cache-{single_flight}").mkdir(exist_ok=True)
        configs = write_llm_configs(folder / "llm.yaml", server.base_url, max_concurrency=concurrency)
        result = api.run(dataset="demo", evaluators=evaluators, output_dir=str(folder / "out"),
                         run_id="on" if single_flight else "off", llm_configs=str(configs),
                         # a folder per mode: the calibration cache lives beside the response cache
                         llm_cache=str(folder / f"cache-{single_flight}" / "cache.sqlite"), calibration_items=10)
    finally:
        LLMClient._fetch_once = original
    journal = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text("utf-8").split("\n")[:-1]]
    return {"calls": server.calls, "exit_code": result.exit_code,
            "shared": sum(e["message"] == "using in-flight annotator response" for e in journal),
            "fetched": sum(e["message"] == "fetched annotator response" for e in journal)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-rows", action="store_true")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    evaluators = _evaluators(args.all_rows)
    with tempfile.TemporaryDirectory() as folder, JudgeServer(default="true", latency=args.latency) as server:
        off = _run(Path(folder), server, evaluators, args.concurrency, single_flight=False)
        on = _run(Path(folder), server, evaluators, args.concurrency, single_flight=True)
    print(f"quickstart judge evaluators ({'all rows' if args.all_rows else 'quickstart max_rows'}), "
          f"max_concurrency {args.concurrency}, fresh cache")
    print(f"  without single-flight: {off['calls']} calls ({off['fetched']} answers fetched)")
    print(f"  with single-flight:    {on['calls']} calls ({on['fetched']} fetched, {on['shared']} answered in flight)")
    print(f"  calls saved: {off['calls'] - on['calls']}")


if __name__ == "__main__":
    main()
