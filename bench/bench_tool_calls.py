"""tool_call_accuracy over 50,000 conversations: Sonar against ragas ``evaluate(ToolCallAccuracy)``.

Usage:
  python bench/bench_tool_calls.py [--rows 50000] [--runs 3] [--dir /tmp/bench_tool_calls]
  python bench/bench_tool_calls.py make DATA.jsonl [--rows N]     (the dataset only)
  python bench/bench_tool_calls.py ragas DATA.jsonl OUT.json      (ragas's side, one process)

Both sides are whole processes timed from outside by ``farm-bench``:

* Sonar: ``sonar run --dataset DATA.jsonl -e tool_call_accuracy`` (start-up, loading and validating
  the dataset, scoring, every artifact of the result folder);
* ragas: this script's ``ragas`` command: read the same JSONL, build one ``MultiTurnSample`` per row
  (ragas messages and tool calls), ``ragas.evaluate(EvaluationDataset(samples), [ToolCallAccuracy()])``,
  write the scores.

After timing, the two sides' per-row values are compared (they must be identical) and the medians
and their ratio printed. RAGAS_DO_NOT_TRACK is set for the ragas side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

TOOLS = ["lookup_policy", "file_claim", "get_weather", "search", "send_email"]
VALUES = ["P-1", "P-2", 1, 1.0, True, "", [1, 2], {"a": 1}, "theft", "fire"]
ARGS = ["id", "kind", "city", "q"]


def _call(rng: random.Random) -> dict:
    return {"name": rng.choice(TOOLS), "arguments": {a: rng.choice(VALUES) for a in rng.sample(ARGS, rng.randint(0, 3))}}


def make(path: Path, rows: int, seed: int = 24) -> None:
    """``rows`` conversations: a reference of 1-4 calls, the assistant's calls an exact, shortened,
    extended, reordered or mutated copy (or none), spread over assistant turns with tool results."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            reference = [_call(rng) for _ in range(rng.randint(1, 4))]
            kind = i % 6
            if kind == 0:
                called = []
            elif kind == 1:
                called = reference[: rng.randint(1, len(reference))]
            elif kind == 2:
                called = reference + [_call(rng)]
            elif kind == 3:
                called = rng.sample(reference, len(reference))
            elif kind == 4:
                called = [dict(c, arguments={**c["arguments"], "id": rng.choice(VALUES)}) for c in reference]
            else:
                called = list(reference)
            turns = [{"role": "user", "content": f"Please handle claim {i}."}]
            for call in called:
                turns.append({"role": "assistant", "content": "", "tool_calls": [call]})
                turns.append({"role": "tool", "content": f"{call['name']} done"})
            turns.append({"role": "assistant", "content": "All done."})
            handle.write(json.dumps({"key": f"c{i}", "model_key": "agent", "conversation": turns,
                                     "expected_tool_calls": reference}) + "\n")


def ragas_side(data: Path, out: Path) -> None:
    """ragas's own evaluate() of ToolCallAccuracy on the JSONL's conversations."""
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    warnings.simplefilter("ignore")
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
    from ragas.metrics import ToolCallAccuracy

    samples = []
    for line in data.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        messages = []
        for turn in record["conversation"]:
            if turn["role"] == "user":
                messages.append(HumanMessage(content=turn["content"]))
            elif turn["role"] == "assistant":
                calls = [ToolCall(name=c["name"], args=c["arguments"]) for c in turn.get("tool_calls", [])]
                messages.append(AIMessage(content=turn["content"], tool_calls=calls or None))
            else:
                messages.append(ToolMessage(content=turn["content"]))
        samples.append(MultiTurnSample(user_input=messages, reference_tool_calls=[
            ToolCall(name=c["name"], args=c["arguments"]) for c in record["expected_tool_calls"]]))
    result = evaluate(EvaluationDataset(samples=samples), metrics=[ToolCallAccuracy()], show_progress=False)
    out.write_text(json.dumps([s["tool_call_accuracy"] for s in result.scores]), encoding="utf-8")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "make":
        parser = argparse.ArgumentParser()
        parser.add_argument("cmd")
        parser.add_argument("path", type=Path)
        parser.add_argument("--rows", type=int, default=50_000)
        options = parser.parse_args()
        make(options.path, options.rows)
        return
    if len(sys.argv) > 1 and sys.argv[1] == "ragas":
        ragas_side(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_tool_calls"))
    options = parser.parse_args()
    options.dir.mkdir(parents=True, exist_ok=True)
    data = options.dir / "conversations.jsonl"
    make(data, options.rows)
    python = sys.executable
    sonar = [python, "-m", "sonar_core.cli", "run", "--dataset", str(data), "-e", "tool_call_accuracy",
             "--no-progress", "-o", str(options.dir / "out"), "--run-id", "bench"]
    ragas_out = options.dir / "ragas.json"
    ragas = f"{python} {Path(__file__).resolve()} ragas {data} {ragas_out}"
    # --run-id reuses one folder: each Sonar run replaces the last (overwrite, not resume).
    shutil.rmtree(options.dir / "out", ignore_errors=True)
    command = ["farm-bench", "-n", str(options.runs), "--warmup", "1", "--timeout", "3000", "--vs", ragas,
               "--", "sh", "-c", "rm -rf " + str(options.dir / "out") + " && exec " + " ".join(sonar)]
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True)
    folder = next((options.dir / "out" / "bench").glob("explainer_*ToolCallAccuracy*"))
    rows = json.loads((folder / "global_llm_eval_results" / "application_json" / "explanation.json")
                      .read_text(encoding="utf-8"))["results"]
    ours = [row["tool_call_accuracy"] for row in sorted(rows, key=lambda r: int(r["key"][1:].split("::")[0]))]
    theirs = json.loads(ragas_out.read_text(encoding="utf-8"))
    same = ours == theirs
    print(f"per-row parity with ragas on {len(ours)} conversations: {'identical' if same else 'DIFFERENT'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
