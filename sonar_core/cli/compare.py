"""``sonar compare``: is run B better or worse than run A beyond noise? (``pack`` and ``replay`` are in
:mod:`.pack`.)

Exit codes (docs/cli.md): 0 compared (no gate tripped), 1 ``--fail-on-regression`` and a
significant regression was found, 2 bad usage, 3 a folder is not a readable finished run, or
the two runs come from different Sonar versions or result schemas.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .common import fail
from ..errors import EXIT_DATA, EXIT_EVALUATOR_FAILED, EXIT_USAGE, SonarError

__all__ = ["compare_command", "EXIT_REGRESSION"]

#: ``--fail-on-regression`` and at least one significant regression.
EXIT_REGRESSION = EXIT_EVALUATOR_FAILED


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--output-dir", "-o", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for comparison.html/.json/.md (default: ./comparison-<A>-vs-<B>).")
@click.option("--json", "as_json", is_flag=True, help="Print comparison.json to stdout too.")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a significant regression is found (a CI gate).")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Confidence level of the intervals; tests are significant below 1 - confidence.")
@click.option("--bootstrap-resamples", "resamples", type=int, default=2000, show_default=True,
              help="Bootstrap resamples for the intervals of non-0/1 metrics.")
@click.option("--allow-partial", is_flag=True,
              help="Compare a run that did not finish (its finished evaluators only), or runs with no model, test "
                   "case or evaluator in common; the comparison says what it left out.")
def compare_command(run_a: Path, run_b: Path, out_dir: Path | None, as_json: bool, fail_on_regression: bool,
                    confidence: float, resamples: int, allow_partial: bool) -> None:
    """Compare two finished runs: A (before) against B (after).

    Matches evaluators (id and parameters), models and test cases; per metric and model gives
    both means with intervals, the delta, the paired test over shared test cases and the rows
    that flipped. A run that did not finish (killed, status running, evaluators without their done
    marker) and runs that share no model, test case or evaluator are refused unless --allow-partial.
    Exit codes: 0 ok, 1 --fail-on-regression and a significant regression, 2 bad usage, 3 unreadable,
    unfinished or incomparable runs, or different Sonar versions / result schemas.
    """
    from ..artifacts.comparison_dir import comparison_json, partial_lines, write_comparison
    from ..artifacts.run_reader import read_run
    from ..findings.comparison import IncompatibleRuns, compare_runs

    if not 0.0 < confidence < 1.0:
        fail(f"--confidence must be between 0 and 1, got {confidence}", EXIT_USAGE)
    if resamples < 1:
        fail(f"--bootstrap-resamples must be at least 1, got {resamples}", EXIT_USAGE)
    try:
        a, b = read_run(run_a.resolve()), read_run(run_b.resolve())
        data = compare_runs(a, b, confidence=confidence, resamples=resamples, allow_partial=allow_partial)
    except IncompatibleRuns as exc:
        fail(str(exc), EXIT_DATA)
        return
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    target = out_dir or Path(f"comparison-{_safe(a.run_id)}-vs-{_safe(b.run_id)}")
    try:
        write_comparison(data, target)
    except OSError as exc:
        fail(f"{target}: cannot write the comparison ({exc.strerror})", EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(comparison_json(data), indent=2, allow_nan=False))
    click.echo(f"Compared {a.run_id} (A) with {b.run_id} (B): {len(data.evaluators)} evaluator(s) matched, "
               f"{data.regressions} significant regression(s); open {target / 'comparison.html'}", err=True)
    for line in partial_lines(data):
        click.echo(f"warning: {line}", err=True)
    if fail_on_regression and data.regressions:
        click.echo(f"error: {data.regressions} significant regression(s) (--fail-on-regression)", err=True)
        sys.exit(EXIT_REGRESSION)


def _safe(name: str) -> str:
    """A run id as a folder name part: letters, digits, '-', '_' and '.'; others become '_'."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "run"
