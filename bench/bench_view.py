"""``sonar view`` on a large run, in headless Chromium: the time to list the runs, to the first page of
cases, to a search result, to a filter result, to a sort by a metric and to a case; and
``open_run(...).rows()`` of one evaluator. With ``--pair DIR``: two runs compared (the comparison shown,
the flips filtered, a flipped case opened, a sort by a metric), on a pair of runs made in DIR.

Usage: python bench/bench_view.py [RUN_FOLDER] [--evaluator text_matching] [--search TEXT] [--repeat 2]
       [--pair DIR [--pair-cases 10000] [--pair-models 10]] [--compare RUN_A RUN_B]

RUN_FOLDER is a run folder with Parquet rows (``bench/bench_scale.py --keep DIR`` leaves the
1,000,000-row one at ``DIR/out/scale``). The server is ``sonar view``'s (sonar_core/view/), started
here over the run's parent folder; the browser is Debian's chromium driven over the DevTools pipe
(tests/chromium.py). Each time runs from the action (navigation, click) to the answer shown on the
page (the table's ``data-ready``); the first pass is cold (DuckDB and the OS cache start empty), the
next ones warm. ``rows()`` is timed the same way, wall and CPU seconds. The load average is printed:
the machine may be shared, so say so with the figures. Goal (issue 41): first page, search and filter
each under 2 s on the 1,000,000-row run; rows() under 5 s.

The pair (``--pair DIR``, made once and kept there): bench_scale's dataset of ``--pair-models`` x
``--pair-cases`` rows as run A, and as run B the same rows with one answer in nineteen changed (one saying
"refund" no longer does, or the reverse), each run with text_matching, under DIR/reports as ``pa`` and
``pb``. The runs keep their per-row JSON (``columnar_only_above`` above the row count): ``sonar compare``
reads a run through artifacts/run_reader.py, which reads the JSON or ``.jay`` rows only (a Parquet-only
run, like bench_scale's 1,000,000-row one, cannot be compared until it reads Parquet too). The first
comparison shown includes reading both runs and ``compare_runs``; the next ones are the kept comparison.
``--compare RUN_A RUN_B`` times the same on two existing run folders (served over their parent folders;
their folder names must differ).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chromium import Browser, act, chromium_binary, wait_for  # noqa: E402  (the tests' DevTools driver)


CASES = "document.getElementById('cases').dataset.ready === '1'"


def _fill(**fields: str) -> str:
    values = {"q": "", "model": "", "category": "", "evaluator": "", "metric": "", "min": "", "max": "", **fields}
    script = "".join(f"document.getElementById({json.dumps(k)}).value = {json.dumps(v)};" for k, v in values.items())
    return script + "document.getElementById('go').click()"


def _sort(browser: Browser, sort: str, order: str) -> float:
    """Sort the open run's cases (no search or filter); seconds to the page shown."""
    wait_for(browser, f"Array.from(document.getElementById('sort').options).some(o => o.value === {json.dumps(sort)})",
             timeout_s=120.0)
    return act(browser, f"document.getElementById('sort').value = {json.dumps(sort)};"
                        f"document.getElementById('order').value = {json.dumps(order)};" + _fill(), CASES, 120.0)


def browse(browser: Browser, base: str, run_id: str, evaluator: str, search: str) -> dict[str, float | str]:
    """One pass: runs listed, first page, search, filter (a metric range), a case; seconds each."""
    found: dict[str, float | str] = {}
    started = time.perf_counter()
    browser.load(base + "/")
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'", timeout_s=120.0)
    found["runs listed"] = time.perf_counter() - started
    click = f"Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === {json.dumps(run_id)}).click()"
    found["first page (after the click)"] = act(browser, click, CASES, 120.0)
    found["first page (from navigation)"] = time.perf_counter() - started
    found["rows"] = browser.evaluate("document.getElementById('count').textContent")
    found["search"] = act(browser, _fill(q=search), CASES, 120.0)
    found["search found"] = browser.evaluate("document.getElementById('count').textContent")
    # The evaluator and metric lists fill in once the run's filters answer (while the first page loads).
    wait_for(browser, f"Array.from(document.getElementById('evaluator').options).some(o => o.value === {json.dumps(evaluator)})", timeout_s=120.0)
    browser.evaluate(f"document.getElementById('evaluator').value = {json.dumps(evaluator)};"
                     "document.getElementById('evaluator').dispatchEvent(new Event('change'))")
    found["filter"] = act(browser, _fill(evaluator=evaluator, metric="model_passes", max="0"), CASES, 120.0)
    found["filter found"] = browser.evaluate("document.getElementById('count').textContent")
    found["case"] = act(browser, "document.querySelector('#cases a.case').click()",
                     "document.getElementById('case').dataset.ready === '1'", 120.0)
    found["sort by a metric"] = _sort(browser, f"{evaluator}.model_passes", "desc")
    found["first row"] = browser.evaluate("document.querySelector('#cases a.case').textContent")
    errors = browser.errors()
    if errors:
        raise SystemExit(f"the page reported errors: {errors}")
    return found


def make_pair(folder: Path, cases: int, models: int) -> Path:
    """Runs ``pa`` and ``pb`` under ``folder/reports`` (made once; see the module's docstring)."""
    import sonar_core
    from bench_scale import build

    reports = folder / "reports"
    if (reports / "pa" / "run.json").is_file() and (reports / "pb" / "run.json").is_file():
        return reports
    folder.mkdir(parents=True, exist_ok=True)
    rows = build(folder / "a.jsonl", cases, models)
    with open(folder / "a.jsonl", encoding="utf-8") as source, open(folder / "b.jsonl", "w", encoding="utf-8") as out:
        for n, line in enumerate(source):
            row = json.loads(line)
            if n % 19 == 7:  # one answer in nineteen: with 10 models (no factor shared with 19) every model has some
                answer = row["actual_output"]
                row["actual_output"] = answer.replace("refund", "reply") if "refund" in answer else answer + " A refund."
            out.write(json.dumps(row) + "\n")
    for name in ("a", "b"):
        started = time.perf_counter()
        result = sonar_core.run({"dataset": str(folder / f"{name}.jsonl"), "evaluators": ["text_matching"],
                                 "output_dir": str(reports), "run_id": f"p{name}", "columnar_only_above": rows + 1})
        if result.status != "success":
            raise SystemExit(f"the pair's run p{name}: {result.message}")
        print(f"pair: run p{name} of {rows:,} rows in {time.perf_counter() - started:.0f} s")
    return reports


def compare_pass(browser: Browser, base: str, a: str = "pa", b: str = "pb") -> dict[str, float | str]:
    """One pass over the pair: comparison shown, flips filtered, a flipped case, a sort by a metric; seconds."""
    found: dict[str, float | str] = {}
    browser.load("about:blank")
    browser.load(base + "/")
    wait_for(browser, "document.getElementById('runs').dataset.ready === '1'", timeout_s=120.0)
    browser.evaluate("for (const box of document.querySelectorAll('#runs input.pick')) "
                     f"if ([{json.dumps(a)}, {json.dumps(b)}].includes(box.value)) box.click()")
    found["comparison shown"] = act(browser, "document.getElementById('compare').click()",
                                    "document.getElementById('cmp').dataset.ready === '1'", 900.0)
    message = browser.evaluate("document.getElementById('cmpmsg').textContent")
    if message:
        raise SystemExit(f"the comparison failed: {message}")
    found["flips"] = browser.evaluate("document.getElementById('fcount').textContent")
    found["flips filtered"] = act(browser, "document.getElementById('fmodel').value = 'model-0';"
                                           "document.getElementById('fmetric').value = 'model_passes';"
                                           "document.getElementById('fdirection').value = 'pass_to_fail';"
                                           "document.getElementById('fgo').click()",
                                  "document.getElementById('flips').dataset.ready === '1'", 120.0)
    found["filtered"] = browser.evaluate("document.getElementById('fcount').textContent")
    found["flipped case (B)"] = act(browser, "document.querySelector('#flips a.case-b').click()",
                                    "document.getElementById('case').dataset.ready === '1'", 120.0)
    found["next flips page"] = act(browser, "document.getElementById('fnext').click()",
                                   "document.getElementById('flips').dataset.ready === '1'", 120.0)
    act(browser, f"Array.from(document.querySelectorAll('#runs a.run')).find(a => a.textContent === {json.dumps(b)}).click()",
        CASES, 120.0)
    found["sort by a metric (B)"] = _sort(browser, "text_matching.model_passes", "asc")
    errors = browser.errors()
    if errors:
        raise SystemExit(f"the page reported errors: {errors}")
    return found


def _line(found: dict[str, float | str]) -> str:
    return ", ".join(f"{k} {v * 1000:.0f} ms" if isinstance(v, float) else f"{k}: {v}" for k, v in found.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path, nargs="?", help="a large run (bench_scale.py --keep DIR: DIR/out/scale)")
    parser.add_argument("--evaluator", default="text_matching")
    parser.add_argument("--search", default="refund is on its way", help="text searched (bench_scale's loops)")
    parser.add_argument("--repeat", type=int, default=2, help="passes (the first is cold)")
    parser.add_argument("--pair", type=Path, help="make (once) and compare two runs in this folder")
    parser.add_argument("--pair-cases", type=int, default=10_000)
    parser.add_argument("--pair-models", type=int, default=10)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("RUN_A", "RUN_B"), help="two existing run folders")
    args = parser.parse_args()
    if args.run_folder is None and args.pair is None and args.compare is None:
        parser.error("give a RUN_FOLDER, --pair DIR or --compare RUN_A RUN_B")
    if args.pair is not None:
        compare([make_pair(args.pair.resolve(), args.pair_cases, args.pair_models)], args.repeat)
    if args.compare is not None:
        a, b = (folder.resolve() for folder in args.compare)
        compare(list(dict.fromkeys([a.parent, b.parent])), args.repeat, a.name, b.name)
    if args.run_folder is not None:
        view(args.run_folder.resolve(), args)


def compare(roots: list[Path], repeat: int, a: str = "pa", b: str = "pb") -> None:
    from sonar_core.view.server import serve_in_thread

    print(f"load average before the pair: {tuple(round(x, 2) for x in os.getloadavg())}")
    server = serve_in_thread(roots)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="sonar-bench-view-") as folder:
        browser = Browser(chromium_binary(), Path(folder) / "profile", Path(folder) / "chromium.log")
        try:
            for n in range(repeat):
                print(f"pair pass {n + 1} ({'cold' if n == 0 else 'warm: the kept comparison'}): "
                      + _line(compare_pass(browser, base, a, b)))
        finally:
            browser.close()
            server.shutdown()
    print(f"load average after the pair: {tuple(round(x, 2) for x in os.getloadavg())}")


def view(run_dir: Path, args: argparse.Namespace) -> None:
    import sonar_core
    from sonar_core.view.server import serve_in_thread

    print(f"load average before: {tuple(round(x, 2) for x in os.getloadavg())}")
    server = serve_in_thread([run_dir.parent])
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="sonar-bench-view-") as folder:
        browser = Browser(chromium_binary(), Path(folder) / "profile", Path(folder) / "chromium.log")
        try:
            for n in range(args.repeat):
                found = browse(browser, base, run_dir.name, args.evaluator, args.search)
                print(f"pass {n + 1} ({'cold' if n == 0 else 'warm'}): " + _line(found))
        finally:
            browser.close()
            server.shutdown()
    for n in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        table = sonar_core.open_run(run_dir).rows(args.evaluator)
        print(f"open_run(...).rows({args.evaluator!r}) pass {n + 1}: {time.perf_counter() - wall:.2f} s wall, "
              f"{time.process_time() - cpu:.2f} CPU s, {table.shape[0]:,} rows x {table.shape[1]} columns")
        del table
    print(f"load average after: {tuple(round(x, 2) for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
