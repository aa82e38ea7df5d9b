"""Benchmark: BLEU and ROUGE side by side with ragas, whole processes, on the same generated pairs.

Each side is a separate process, timed from its start to its exit (interpreter start-up and
imports included, as a user or a CI job pays them):

* Sonar: ``sonar run --no-progress -d pairs.jsonl -e bleu`` (or ``-e rouge``) into a fresh
  output folder: load, score, write every artifact;
* ragas: ``evaluate(EvaluationDataset(samples), metrics=[BleuScore()])`` (or ``RougeScore()``),
  the ``ragas`` sub-command of this script, with ``RAGAS_DO_NOT_TRACK=true``.

The pairs are ``summarization_data.make_rows`` (references of 20-120 tokens, each answered by
3 models). After timing, the values are checked:

* ROUGE: ragas's ``RougeScore()`` is rouge-score's ROUGE-L F1 with the Porter stemmer, which is
  Sonar's ``rouge_l`` (default ``use_stemmer``): every row must be equal.
* BLEU: ragas's ``BleuScore`` is a different metric (sacrebleu's corpus BLEU-4 over the pieces
  of ``text.split(". ")``, 13a tokenisation, exponential smoothing, one number per row), so
  the values are not comparable; Sonar's four BLEU values per row are checked against NLTK's
  ``sentence_bleu`` on NLTK's own tokens (untrained Punkt + ``NLTKWordTokenizer``) instead,
  bit for bit. The work compared is one BLEU evaluation of each pair on each side.

ragas's ``BleuScore`` needs ``sacrebleu``, which Sonar does not depend on: install it beside
ragas, or into a folder of its own (``pip install --target DIR sacrebleu portalocker tabulate
colorama lxml``) and pass ``--peer-path DIR``.

Before timing, Sonar's own sources are compiled to bytecode (``compileall``), as ``pip install``
does for an installed package and as ragas's and NLTK's installed files are: a source checkout run
with ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every module at each start
(``--no-compile`` keeps that, to measure it).

``farm`` times the two processes with ``farm-bench`` instead (A/B pairs, the operating system's
user and system seconds, min/median/max), then checks the values as above:

    python bench/bench_bleu_rouge.py [--rows 5000] [--repeat 5] [--peer-path DIR] [--no-compile]
    python bench/bench_bleu_rouge.py farm [--metric bleu] [--rows 5000] [--repeat 3] [--peer-path DIR]
    python bench/bench_bleu_rouge.py generate DIR [--rows 5000]      # just write DIR/pairs.jsonl
    python bench/bench_bleu_rouge.py ragas {bleu,rouge} PAIRS.jsonl   # the ragas process alone
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SONAR = Path(sys.executable).parent / "sonar"


def generate(folder: Path, rows: int, seed: int = 0) -> Path:
    """Write ``rows`` generated pairs to ``folder/pairs.jsonl``; return its path."""
    sys.path.insert(0, str(BENCH))
    from summarization_data import make_rows

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pairs.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in make_rows(rows, seed):
            handle.write(json.dumps({
                "test_case_key": row.test_case_key, "model_key": row.model_key, "input": row.input,
                "expected_output": row.expected_output, "actual_output": row.actual_output,
            }) + "\n")
    return path


def ragas_scores(metric_name: str, pairs: Path) -> list[float]:
    """ragas's evaluate() with one metric on the pairs, as a ragas user runs it; per-row scores."""
    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import BleuScore, RougeScore

    rows = [json.loads(line) for line in pairs.open(encoding="utf-8")]
    samples = [SingleTurnSample(response=r["actual_output"], reference=r["expected_output"]) for r in rows]
    metric = BleuScore() if metric_name == "bleu" else RougeScore()
    result = evaluate(EvaluationDataset(samples), metrics=[metric], show_progress=False)
    return [next(iter(scores.values())) for scores in result.scores]


def sonar_command(metric_name: str, pairs: Path, out: Path) -> list[str]:
    return [str(SONAR), "run", "--no-progress", "-d", str(pairs), "-e", metric_name, "-o", str(out), "--run-id", "r"]


def timed(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one child process, start to exit."""
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status = os.waitpid(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(args)} failed: {child.stderr.read().decode()[-2000:]}")
    return elapsed


def sonar_values(out: Path) -> list[dict]:
    """Per-row results of the run in ``out`` (its global_llm_eval_results JSON)."""
    [path] = out.glob("r/explainer_*/global_llm_eval_results/application_json/explanation.json")
    return json.loads(path.read_text(encoding="utf-8"))["results"]


def check_bleu(rows: list[dict], results: list[dict]) -> int:
    """Assert Sonar's BLEU-1..4 equal NLTK's sentence_bleu on NLTK's tokens; return rows checked."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    punkt, treebank = PunktSentenceTokenizer(), NLTKWordTokenizer()
    smoothing = SmoothingFunction(epsilon=0.1).method1
    weights = ((1.0,), (1 / 2, 1 / 2), (1 / 3, 1 / 3, 1 / 3), (1 / 4, 1 / 4, 1 / 4, 1 / 4))

    def tokens(text: str) -> list[str]:
        return [w for s in punkt.tokenize(text) if s.strip() for w in treebank.tokenize(s)]

    for row, result in zip(rows, results, strict=True):
        ref, cand = tokens(row["expected_output"]), tokens(row["actual_output"])
        # (every generated text has more than 4 tokens: no short-answer reweighting needed)
        expected = sentence_bleu([ref], cand, weights=weights, smoothing_function=smoothing)
        got = [result[f"bleu_{n}"] for n in range(1, 5)]
        assert got == expected, (row, got, expected)
    return len(rows)


def compile_sonar() -> None:
    """Sonar's sources to bytecode, as an installed package has them (see the module docstring)."""
    import compileall

    import sonar_core
    import sonar_plugins

    for package in (sonar_core, sonar_plugins):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1, workers=1)


def farm(metric: str, rows: int, runs: int, env: dict[str, str]) -> None:
    """Time ragas (B) against Sonar (A) with farm-bench, then check the values."""
    with tempfile.TemporaryDirectory() as tmp:
        pairs = generate(Path(tmp), rows)
        out = Path(tmp) / "out"
        sonar = " ".join(sonar_command(metric, pairs, out))
        ragas = f"{sys.executable} {__file__} ragas {metric} {pairs}"
        print(f"A = sonar run -e {metric}; B = ragas evaluate(); {rows} pairs; load before: {os.getloadavg()}")
        subprocess.run(["farm-bench", "-n", str(runs), "--timeout", "3000", "--vs", ragas, "--",
                        "sh", "-c", f"rm -rf {out} && exec {sonar}"], env=env, check=True)
        print(f"load after: {os.getloadavg()}")
        if metric == "bleu":
            checked = check_bleu([json.loads(line) for line in pairs.open(encoding="utf-8")], sonar_values(out))
            print(f"BLEU-1..4 of all {checked} rows equal NLTK's sentence_bleu (bit for bit)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="*", help="farm | generate DIR | ragas {bleu,rouge} PAIRS (default: the benchmark)")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each process (alternating)")
    parser.add_argument("--peer-path", help="a folder to put on ragas's PYTHONPATH (for sacrebleu)")
    parser.add_argument("--metric", choices=["bleu", "rouge"], default="bleu", help="farm: which metric")
    parser.add_argument("--no-compile", action="store_true", help="leave Sonar's sources without bytecode")
    args = parser.parse_args()
    if args.command[:1] == ["generate"]:
        print(generate(Path(args.command[1]), args.rows))
        return
    if args.command[:1] == ["ragas"]:
        scores = ragas_scores(args.command[1], Path(args.command[2]))
        print(f"{len(scores)} rows, mean {statistics.fmean(scores):.6f}")
        return

    env = dict(os.environ, RAGAS_DO_NOT_TRACK="true")
    if args.peer_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.peer_path, env.get("PYTHONPATH")]))
    if not args.no_compile:
        compile_sonar()
    if args.command[:1] == ["farm"]:
        farm(args.metric, args.rows, args.repeat, env)
        return
    with tempfile.TemporaryDirectory() as tmp:
        pairs = generate(Path(tmp), args.rows)
        rows = [json.loads(line) for line in pairs.open(encoding="utf-8")]
        print(f"{len(rows)} pairs, {len({r['expected_output'] for r in rows})} distinct references; "
              f"{args.repeat} runs of each process, alternating; wall seconds, median (min-max)")
        out = Path(tmp) / "out"
        for metric in ("bleu", "rouge"):
            sonar_s, ragas_s, ratios = [], [], []
            ragas = [sys.executable, __file__, "ragas", metric, str(pairs)]
            for _ in range(args.repeat + 1):  # the first pair warms the file cache and is not counted
                shutil.rmtree(out, ignore_errors=True)
                sonar_s.append(timed(sonar_command(metric, pairs, out), env))
                ragas_s.append(timed(ragas, env))
                ratios.append(ragas_s[-1] / sonar_s[-1])
            sonar_s, ragas_s, ratios = sonar_s[1:], ragas_s[1:], ratios[1:]
            print(f"{metric.upper():5s} sonar {statistics.median(sonar_s):6.2f} s ({min(sonar_s):.2f}-{max(sonar_s):.2f})"
                  f"   ragas {statistics.median(ragas_s):6.2f} s ({min(ragas_s):.2f}-{max(ragas_s):.2f})"
                  f"   ragas/sonar, pair by pair: median {statistics.median(ratios):.2f}x")
            results = sonar_values(out)
            if metric == "bleu":
                print(f"      BLEU-1..4 of all {check_bleu(rows, results)} rows equal NLTK's sentence_bleu (bit for bit);"
                      " ragas's BleuScore is sacrebleu's corpus BLEU of the row's sentences: another metric")
            else:
                theirs = ragas_scores("rouge", pairs)
                assert [r["rouge_l"] for r in results] == theirs, "ROUGE-L differs from ragas's RougeScore"
                print(f"      ROUGE-L of all {len(theirs)} rows equal ragas's RougeScore values (bit for bit)")


if __name__ == "__main__":
    main()
