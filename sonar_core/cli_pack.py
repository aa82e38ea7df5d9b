"""``sonar pack`` and ``sonar replay``: an evidence pack of a finished run, and its rebuild (:mod:`.evidence_pack`).

Exit codes (docs/cli.md): 0 packed / replayed with no file differing beyond what may, 1 replayed
but some file differs, 2 bad usage (a non-empty replay folder), 3 the run or the pack cannot be
read, a pack member would land outside the output folder, or the pack lacks an answer the run needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli_common import fail
from .errors import EXIT_EVALUATOR_FAILED, SonarError

__all__ = ["pack_command", "replay_command"]


@click.command("pack")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--output", "-o", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="The zip to write (default: ./<run id>.zip).")
def pack_command(run_dir: Path, target: Path | None) -> None:
    """Write an evidence pack of a finished run: configuration, dataset, journal, run.json, the report and
    only the response-cache entries the run used. Exit codes: 0 ok, 3 the run cannot be packed."""
    from .evidence_pack import make_pack

    target = target or Path(f"{Path(run_dir).resolve().name}.zip")
    try:
        manifest = make_pack(run_dir, target)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    click.echo(f"Packed {manifest['run_id']}: {len(manifest['files'])} files, "
               f"{manifest['cache_entries']['responses']} cached answer(s) -> {target}", err=True)


@click.command("replay")
@click.argument("pack", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output-dir", "-o", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="An empty (or new) folder for the rebuilt run.")
def replay_command(pack: Path, out_dir: Path) -> None:
    """Rebuild every artifact of an evidence pack with no model, judge or network call, and print the
    files that differ from the packed ones beyond timestamps, durations, paths and cache counters.
    Exit codes: 0 identical, 1 some file differs, 2 bad usage, 3 unreadable or unsafe pack, or an
    answer missing from it."""
    from .evidence_pack import replay_pack

    try:
        run_dir, report = replay_pack(pack, out_dir)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    if not report:
        click.echo(f"Replayed into {run_dir}: every file identical to the pack apart from timestamps, "
                   "durations, paths and cache counters")
        return
    click.echo(f"Replayed into {run_dir}: {len(report)} file(s) differ from the pack:")
    for name, diff in report.items():
        click.echo(f"  {name}: {diff[0]}")
    sys.exit(EXIT_EVALUATOR_FAILED)
