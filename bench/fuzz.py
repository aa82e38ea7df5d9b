"""Fuzz every input surface for N minutes with random seeds (issue 25); the CI suite runs the same
surfaces with fixed seeds (tests/fuzz/test_fuzz.py). The surfaces: dataset files, configurations,
command-line flags, evaluator parameters, the configuration's path settings (``paths``) and parameter
values written as YAML text, aliases and tags included (``values``: tests/fuzz/fuzz_paths.py), judge answers
and host responses.

    .venv/bin/python bench/fuzz.py --minutes 30 [--surface dataset ...]

Surfaces take turns, a few cases each, until the time is up. Prints, per surface, the cases tried,
the failures found (each with its case and what broke), and the exit codes seen. Exit status 1 when
any case broke the promise of docs/reliability.md.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS / "fuzz"), str(TESTS)]

from hypothesis import HealthCheck, given, settings  # noqa: E402

from fuzz_properties import PromiseBroken, check  # noqa: E402
from fuzz_surfaces import SERVED, SURFACES  # noqa: E402
from judge_server import JudgeServer  # noqa: E402

TURN = 10  # cases per surface per turn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--surface", action="append", choices=sorted({*SURFACES, *SERVED}))
    args = parser.parse_args()
    chosen = args.surface or sorted({*SURFACES, *SERVED})
    tried: collections.Counter = collections.Counter()
    codes: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures: dict[str, list[str]] = collections.defaultdict(list)
    deadline = time.monotonic() + args.minutes * 60
    with JudgeServer() as server:
        while time.monotonic() < deadline:
            for name in chosen:
                if time.monotonic() >= deadline:
                    break
                strategy, run = SURFACES[name] if name in SURFACES else SERVED[name]
                extra = () if name in SURFACES else (server,)

                @settings(max_examples=TURN, database=None, deadline=None, derandomize=False,
                          suppress_health_check=list(HealthCheck))
                @given(strategy)
                def one(case):
                    server.raw = None
                    tried[name] += 1
                    with tempfile.TemporaryDirectory(prefix="sonar-fuzz-") as folder:
                        sandbox = Path(folder)
                        try:
                            outcome, output = run(*extra, case, sandbox)
                            codes[name][outcome.exit_code] += 1
                            check(outcome, sandbox, output)
                        except PromiseBroken as exc:
                            failures[name].append(f"{exc} -- case {case!r}"[:600])
                        except Exception as exc:  # the harness itself must not stop the bench
                            failures[name].append(f"harness: {type(exc).__name__}: {exc} -- case {case!r}"[:600])

                one()
    print(f"{'surface':<10} {'cases':>7} {'failures':>9}  exit codes seen")
    for name in chosen:
        seen = ", ".join(f"{code}: {n}" for code, n in sorted(codes[name].items()))
        print(f"{name:<10} {tried[name]:>7} {len(failures[name]):>9}  {seen}")
    for name in chosen:
        for failure in failures[name][:5]:
            print(f"FAIL {name}: {failure}")
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
