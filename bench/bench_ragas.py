"""Benchmark: the seven RAGAS evaluators through Sonar against ragas's own ``evaluate()``, same rows, same server.

The scripted ragas judge (tests/ragas_judge.py, on tests/judge_server.py's server) runs in its own
process on 127.0.0.1 with a fixed latency per answer (default 200 ms). The rows: ``--cases`` test
cases (default 250) each answered by two models (500 rows), three retrieved chunks per case.

* Sonar: one run of the seven evaluators (faithfulness, answer_relevancy, context_precision,
  context_recall, ragas_context_relevance, answer_correctness, ragas) with a fresh response cache, the
  judge configured with ``max_concurrency`` = ``--concurrency`` (default 16); then the same run again
  (the cached rerun).
* ragas: ``evaluate()`` of the six ragas metrics behind them (RAGAS itself is their harmonic mean,
  no judge call) with LangChain's ``ChatOpenAI`` on the same server, ``max_workers`` = ``--concurrency``,
  the same embedding model loaded directly.

The server answers a call with ``n`` choices as OpenAI does, so both sides ask answer relevancy's three
questions in one call (ragas's LangChain wrapper sends ``n``; Sonar's client asks for choices). Every
value of the six metrics is compared between the two sides.

The embedding model and the imports are warmed before either is timed. ``--torch-threads`` sets
torch's intra-op threads for both (default 1): on a shared 2-core machine torch's default of 2
threads made each small encode take about 1.3 s instead of 0.05 s, which would swamp both sides.
Goal: Sonar at least 2x faster cold, and the cached rerun under 5% of the cold time.

    .venv/bin/python bench/bench_ragas.py [--cases 250] [--latency 0.2] [--concurrency 16] [--torch-threads 1]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from judge_server import served, server_stats  # noqa: E402 - the test server lives with the tests

PLACES = ["Paris", "Rome", "Lyon", "Oslo", "Lima", "Kyiv", "Bern", "Riga", "Doha", "Baku"]
COLOURS = ["red", "blue", "green", "white", "black", "grey", "pink", "gold"]
#: Sonar's evaluator -> the column of ragas's scores with the same metric.
COLUMNS = {"faithfulness": "faithfulness", "answer_relevancy": "answer_relevancy",
           "context_precision": "llm_context_precision_with_reference", "context_recall": "context_recall",
           "ragas_context_relevance": "nv_context_relevance", "answer_correctness": "answer_correctness"}
SEVEN = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "ragas_context_relevance",
         "answer_correctness", "ragas"]


def make_rows(cases: int) -> list[dict]:
    rows = []
    for i in range(cases):
        place, colour = PLACES[i % len(PLACES)], COLOURS[i % len(COLOURS)]
        wrong = PLACES[(i + 3) % len(PLACES)]
        facts = [f"Device {i} is assembled in {place}.", f"Device {i} has a {colour} case."]
        context = [facts[0], f"Device {i + 1} weighs {i % 7 + 1} kilograms.", facts[1]]
        reference = " ".join(facts)
        answers = {"good": reference, "weak": f"Device {i} is assembled in {wrong}. {facts[1]}"}
        for model, answer in answers.items():
            rows.append({"test_case_key": f"case{i}", "model_key": model,
                         "input": f"Where is device {i} assembled and what colour is its case?",
                         "context": context, "expected_output": reference, "actual_output": answer,
                         "categories": ["rag"]})
    return rows


def serve(dataset: str, latency: float) -> None:
    """The server process: prints its base URL, serves until stdin closes."""
    from judge_server import JudgeServer
    from ragas_judge import RagasJudge

    rows = json.loads(Path(dataset).read_text())
    with JudgeServer(default=RagasJudge(rows), latency=latency, keep_bodies=False) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


def run_sonar(tmp: Path, dataset: Path, base_url: str, concurrency: int, name: str) -> tuple[float, object]:
    import sonar_core

    configs = tmp / "llm.yaml"
    configs.write_text(f"default_judge: bench\nllms:\n  bench:\n    base_url: {base_url}\n    model: scripted\n"
                       f"    max_concurrency: {concurrency}\n    timeout: 60\n", encoding="utf-8")
    started = time.perf_counter()
    result = sonar_core.run(dataset=str(dataset), evaluators=SEVEN, output_dir=str(tmp / name), run_id="r",
                            llm_configs=str(configs), llm_cache=str(tmp / "cache.sqlite"))
    seconds = time.perf_counter() - started
    assert result.status == "success", result.message
    return seconds, result


def run_ragas(rows: list[dict], base_url: str, concurrency: int, encoder) -> tuple[float, list[dict]]:
    from ragas.metrics._answer_correctness import AnswerCorrectness
    from ragas.metrics._answer_relevance import AnswerRelevancy
    from ragas.metrics._context_precision import LLMContextPrecisionWithReference
    from ragas.metrics._context_recall import LLMContextRecall
    from ragas.metrics._faithfulness import Faithfulness
    from ragas.metrics._nv_metrics import ContextRelevance
    from ragas_direct import evaluate_directly

    metrics = [Faithfulness(), AnswerRelevancy(), LLMContextPrecisionWithReference(), LLMContextRecall(),
               ContextRelevance(), AnswerCorrectness()]
    started = time.perf_counter()
    scores = evaluate_directly(rows, metrics, base_url, encoder, max_workers=concurrency, model="scripted")
    return time.perf_counter() - started, scores


def sonar_values(result, evaluator_id: str) -> list:
    from sonar_core import names

    record = json.loads((result.run_dir / names.RUN_JSON).read_text())
    folder = next(result.run_dir / e["job_location"] for e in record["result"]["executed_explainers"]
                  if e["evaluator_id"] == evaluator_id)
    data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    return [r[evaluator_id] for r in data["results"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--torch-threads", type=int, default=1, help="torch intra-op threads; 0 keeps torch's default")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return

    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    import ragas.metrics._faithfulness  # noqa: F401 - warm the imports before timing
    import sonar_plugins.ragas.adapter  # noqa: F401
    from sonar_core.models import get_store

    encoder = get_store().load_sentence_transformer("all-MiniLM-L6-v2", "cpu")
    rows = make_rows(args.cases)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        dataset = tmp / "rows.json"
        dataset.write_text(json.dumps(rows), encoding="utf-8")
        server_args = ("--serve", str(dataset), "--latency", str(args.latency))
        with served(*server_args, script=__file__) as sonar_url:
            cold, first = run_sonar(tmp, dataset, sonar_url, args.concurrency, "cold")
            cold_calls = server_stats(sonar_url)["calls"]
            warm, second = run_sonar(tmp, dataset, sonar_url, args.concurrency, "cached")
            warm_calls = server_stats(sonar_url)["calls"] - cold_calls
        with served(*server_args, script=__file__) as ragas_url:
            ragas_seconds, scores = run_ragas(rows, ragas_url, args.concurrency, encoder)
            ragas_calls = server_stats(ragas_url)["calls"]
        mismatches = 0
        for evaluator_id, column in COLUMNS.items():
            for ours, theirs in zip(sonar_values(first, evaluator_id), (s[column] for s in scores)):
                same = (ours is None and math.isnan(theirs)) or (ours is not None and abs(ours - theirs) < 1e-6)
                mismatches += not same
    print(f"{len(rows)} rows ({args.cases} cases x 2 models), judge latency {args.latency * 1000:.0f} ms, "
          f"concurrency {args.concurrency} (Sonar max_concurrency, ragas max_workers), torch threads "
          f"{torch.get_num_threads()}")
    print(f"Sonar, seven evaluators, cold:   {cold:7.2f} s  {cold_calls:5d} judge calls")
    print(f"Sonar, seven evaluators, cached: {warm:7.2f} s  {warm_calls:5d} judge calls = {warm / cold:.1%} of cold "
          f"(goal < 5%)")
    print(f"ragas evaluate(), six metrics:  {ragas_seconds:7.2f} s  {ragas_calls:5d} judge calls")
    print(f"Sonar cold is {ragas_seconds / cold:.2f}x faster than ragas evaluate() (goal >= 2x); "
          f"{mismatches} value mismatches over the six metrics' {len(COLUMNS) * len(rows)} values")


if __name__ == "__main__":
    main()
