"""``sonar view`` on a large run, in headless Chromium: the time to list the runs, to the first page of
cases, to a search result, to a filter result and to a case; and ``open_run(...).rows()`` of one evaluator.

Usage: python bench/bench_view.py RUN_FOLDER [--evaluator text_matching] [--search TEXT] [--repeat 2]

RUN_FOLDER is a run folder with Parquet rows (``bench/bench_scale.py --keep DIR`` leaves the
1,000,000-row one at ``DIR/out/scale``). The server is ``sonar view``'s (sonar_core/view/), started
here over the run's parent folder; the browser is Debian's chromium driven over the DevTools pipe
(tests/chromium.py). Each time runs from the action (navigation, click) to the answer shown on the
page (the table's ``data-ready``); the first pass is cold (DuckDB and the OS cache start empty), the
next ones warm. ``rows()`` is timed the same way, wall and CPU seconds. The load average is printed:
the machine may be shared, so say so with the figures. Goal (issue 41): first page, search and filter
each under 2 s on the 1,000,000-row run; rows() under 5 s.
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

from chromium import Browser, act, chromium_binary, wait_for  # noqa: E402  (the tests' DevTools driver)


CASES = "document.getElementById('cases').dataset.ready === '1'"


def _fill(**fields: str) -> str:
    values = {"q": "", "model": "", "category": "", "evaluator": "", "metric": "", "min": "", "max": "", **fields}
    script = "".join(f"document.getElementById({json.dumps(k)}).value = {json.dumps(v)};" for k, v in values.items())
    return script + "document.getElementById('go').click()"


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
    errors = browser.errors()
    if errors:
        raise SystemExit(f"the page reported errors: {errors}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path)
    parser.add_argument("--evaluator", default="text_matching")
    parser.add_argument("--search", default="refund is on its way", help="text searched (bench_scale's loops)")
    parser.add_argument("--repeat", type=int, default=2, help="passes (the first is cold)")
    args = parser.parse_args()
    run_dir = args.run_folder.resolve()
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
                print(f"pass {n + 1} ({'cold' if n == 0 else 'warm'}): " + ", ".join(
                    f"{k} {v * 1000:.0f} ms" if isinstance(v, float) else f"{k}: {v}" for k, v in found.items()))
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
