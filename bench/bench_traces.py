"""Reading and mapping 1,000,000 spans: time and peak memory of ``load_traces`` at each scope.

Usage:
  python bench/bench_traces.py [--spans 1000000] [--scopes trace,span,session] [--dir /tmp/bench_traces]
  python bench/bench_traces.py make SPANS.jsonl [--spans N]      (the span file only)
  python bench/bench_traces.py load SPANS.jsonl SCOPE SPILL_DIR [--workers N]  (one load, here; prints JSON)
  python bench/bench_traces.py check [--dir D] [--workers N]   (the rows of 20,000 spans, hashed: unchanged?)

The file is OpenInference traffic as an agent in production writes it: traces of five spans (an AGENT
root, a RETRIEVER with three documents, two LLM calls with their messages, the first calling a tool,
and the TOOL span), 2 in 3 traces in sessions of two. Fifty traces run at once, so the spans of a
trace are spread over the export batches (a line of OTLP JSON per fifty traces: 250 spans) in the order
they end, each trace's root last. Goal (issue 39): under 60 s and under 1 GiB of peak memory.

Each load runs in a process of its own (start-up included in its wall time), spilling under SPILL_DIR past
100,000 spans in memory. Its peak memory counts every process of the load: the largest sum of the resident
memory of the loading process and its worker processes (:mod:`sonar_core.traces.parallel`), sampled every
0.1 s, or the loading process's own ``ru_maxrss`` when that is larger; its CPU time is theirs together. The machine's
load average is printed beside the figures: on a shared machine they are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

S = 1_000_000_000
T0 = 1_717_000_000_000_000_000
WORDS = ("policy claim theft water damage deductible covered home contents bicycle amount filed booklet "
         "customer number kind loss month report pipe burst leak fire hail storm window door").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _kv(key: str, value) -> dict:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace: str, span: str, parent: str, name: str, start: int, end: int, attrs: dict) -> dict:
    return {"traceId": trace, "spanId": span, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": [_kv(k, v) for k, v in attrs.items()], "status": {}}


def _trace(rng: random.Random, n: int, start: int) -> list[tuple[int, dict]]:
    """One trace's five spans, with their end times."""
    trace = f"{rng.getrandbits(128):032x}"
    ids = [f"{rng.getrandbits(64):016x}" for _ in range(5)]
    question, answer = _text(rng, 14), _text(rng, 30)
    session = {"session.id": f"session-{n // 3}"} if n % 3 == 0 or n % 3 == 1 else {}
    call = {"llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_0",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup_policy",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"policy_id": "NW-1001"}'}
    messages = {"llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": _text(rng, 12),
                "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": question}
    t = start
    spans = [
        (t + 1 * S // 10, _span(trace, ids[1], ids[0], "retrieve", t, t + S // 10, {
            "openinference.span.kind": "RETRIEVER", "input.value": question,
            **{f"retrieval.documents.{i}.document.content": _text(rng, 40) for i in range(3)}})),
        (t + 5 * S // 10, _span(trace, ids[2], ids[0], "ChatCompletion", t + S // 10, t + 5 * S // 10, {
            "openinference.span.kind": "LLM", "llm.model_name": rng.choice(["gpt-4o", "gpt-4o-mini"]),
            "llm.token_count.prompt": 120, "llm.token_count.completion": 12, **messages,
            "llm.output_messages.0.message.role": "assistant", **call, **session})),
        (t + 6 * S // 10, _span(trace, ids[3], ids[0], "lookup_policy", t + 5 * S // 10, t + 6 * S // 10, {
            "openinference.span.kind": "TOOL", "tool.name": "lookup_policy", "input.value": '{"policy_id": "NW-1001"}',
            "output.value": _text(rng, 10), "tool_call.id": "call_0"})),
        (t + 9 * S // 10, _span(trace, ids[4], ids[0], "ChatCompletion", t + 6 * S // 10, t + 9 * S // 10, {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.token_count.prompt": 180, **messages,
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer})),
        (t + S, _span(trace, ids[0], "", "agent", t, t + S, {
            "openinference.span.kind": "AGENT", "input.value": question, "output.value": answer, **session})),
    ]
    return spans


def make(path: Path, spans: int, seed: int = 39) -> None:
    rng = random.Random(seed)
    traces = spans // 5
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        for first in range(0, traces, 50):  # fifty traces at once: their spans interleave by end time
            pending = []
            for n in range(first, min(first + 50, traces)):
                pending += _trace(rng, n, T0 + n * S // 5 + rng.randrange(S // 10))
            pending.sort(key=lambda pair: pair[0])
            for at in range(0, len(pending), 512):
                batch = [span for _, span in pending[at:at + 512]]
                request = {"resourceSpans": [{"resource": {"attributes": [_kv("service.name", "claims")]},
                                              "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}]}
                handle.write(json.dumps(request, separators=(",", ":")) + "\n")
                written += len(batch)
    print(f"wrote {written:,} spans ({path.stat().st_size / 2**20:,.0f} MiB) to {path}", file=sys.stderr)


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux: /proc/PID/task/TID/children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                pass
    return found


class _Peak(threading.Thread):
    """The largest sum of resident memory of this process and its children, sampled every 0.1 s (KiB)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.peak = max(self.peak, sum(_rss_kib(pid) for pid in _family(os.getpid())))


def load(path: Path, scope: str, spill: Path, workers: int | None = None) -> None:
    from sonar_core.traces.load import load_traces
    from sonar_core.traces.parallel import worker_count
    from sonar_core.traces.spec import TraceInput

    sampler = _Peak()
    sampler.start()
    started = time.perf_counter()
    spec = TraceInput(files=[str(path)], scope=scope, **({} if workers is None else {"workers": workers}))
    dataset = load_traces(spec, spill_parent=spill)
    seconds = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    traces = dataset.summary()["traces"]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, ended by now
    print(json.dumps({"scope": scope, "seconds_in_load": round(seconds, 1), "rows": len(dataset.rows),
                      "spans_read": traces["spans_read"], "spans_skipped": traces["spans_skipped"],
                      "workers": worker_count(spec.workers, [path]),
                      "cpu_seconds": round(usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime, 1),
                      "cpu_seconds_loader": round(usage.ru_utime + usage.ru_stime, 1),
                      "peak_rss_mib": round(max(usage.ru_maxrss, sampler.peak) / 1024)}))


#: ``check``: the rows of the bench's 20,000 spans (seed 39) at each scope, hashed (:func:`rows_digest`), as the
#: loader made them on main at f37c0b6 (28 November 2026; the same rows as before its fast paths, 3f0d343, whose
#: digests were taken with the file named by its absolute path, which the skipped spans' examples carry: the file
#: is now named relative to --dir, so the digests hold wherever it is): a change to the loader must leave them.
CHECK_SPANS = 20_000
CHECK_DIGESTS = {"span": "41ba26bfe24283df07a629cd22ecb14f81b522e939fcdfd350b3193077186e7e",
                 "trace": "6c01756bd5c134d23b2320e54dee8c5903ee3667eb5f5fae45e20430eee3ec04",
                 "session": "7794bc4abdc7b781f1a3044f779e32b83829f29d09802514aeffd7060f08b9ba"}


def rows_digest(dataset) -> str:
    """sha256 of every row (all its fields) and of what the load counted, in order."""
    import dataclasses
    import hashlib

    digest = hashlib.sha256()
    for row in dataset.rows:
        digest.update(json.dumps(dataclasses.asdict(row), sort_keys=True).encode("utf-8", "surrogatepass"))
    digest.update(json.dumps(dataset.summary()["traces"], sort_keys=True).encode())
    return digest.hexdigest()


def check(folder: Path, workers: int | None) -> int:
    """Load the check's spans at each scope (spilling past 1,000 spans, so that the spill is checked too) and
    compare the rows' digests with :data:`CHECK_DIGESTS`; 1 when one differs."""
    from sonar_core.traces.load import load_traces
    from sonar_core.traces.spec import TraceInput

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"check-{CHECK_SPANS}.jsonl"
    if not data.is_file():
        make(data, CHECK_SPANS)
    os.chdir(folder)  # the file named as it is here: the examples of what was skipped name it, the digests hold it
    differ = 0
    for scope, expected in CHECK_DIGESTS.items():
        spec = TraceInput(files=[data.name], scope=scope, **({} if workers is None else {"workers": workers}))
        found = rows_digest(load_traces(spec, spill_parent=Path("spill"), limit=1_000))
        differ += found != expected
        print(f"{scope:8s} {found} {'same' if found == expected else 'DIFFERENT from ' + expected}")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="bench", choices=["bench", "make", "load", "check"])
    parser.add_argument("args", nargs="*")
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--scopes", default="trace,span,session")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_traces"))
    parser.add_argument("--workers", type=int, default=None,
                        help="traces.workers (default auto: two workers on a large file and two CPUs or more; "
                             "1: map in the loading process)")
    options = parser.parse_args()
    if options.command == "make":
        return make(Path(options.args[0]), options.spans)
    if options.command == "check":
        sys.exit(check(options.dir, options.workers))
    if options.command == "load":
        return load(Path(options.args[0]), options.args[1], Path(options.args[2]), options.workers)
    options.dir.mkdir(parents=True, exist_ok=True)
    data = options.dir / f"spans-{options.spans}.jsonl"
    if not data.is_file():
        make(data, options.spans)
    print(f"{options.spans:,} spans, {data.stat().st_size / 2**20:,.0f} MiB; load average before: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    for scope in options.scopes.split(","):
        started = time.perf_counter()
        command = [sys.executable, __file__, "load", str(data), scope, str(options.dir / "spill")]
        done = subprocess.run(command + ([f"--workers={options.workers}"] if options.workers else []),
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - started
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{scope:8s} wall {wall:6.1f} s (load {figures['seconds_in_load']} s, CPU {figures['cpu_seconds']} s of "
              f"which the loading process {figures['cpu_seconds_loader']} s, {figures['workers']} workers), "
              f"{figures['rows']:,} rows, {options.spans / wall:,.0f} spans/s, peak RSS {figures['peak_rss_mib']:,} MiB, "
              f"skipped {figures['spans_skipped'] or 'none'}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
