"""``sonar pack`` and ``sonar replay``: an evidence pack of a finished run, and its rebuild (:mod:`.evidence_pack`).

Exit codes (docs/cli.md): 0 packed / replayed with no file differing beyond what may, 1 replayed
but some file differs, 2 bad usage (a non-empty replay folder), 3 the run or the pack cannot be
read, a pack member would land outside the output folder, or the pack lacks an answer the run needs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .common import fail
from ..errors import EXIT_EVALUATOR_FAILED, SonarError

__all__ = ["pack_command", "replay_command"]


@click.command("pack")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--output", "-o", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="The zip to write (default: ./<run id>.zip).")
def pack_command(run_dir: Path, target: Path | None) -> None:
    """Write an evidence pack of a finished run: configuration, dataset, journal, run.json, the report and
    only the response-cache entries the run used. Exit codes: 0 ok, 3 the run cannot be packed."""
    from ..evidence_pack import make_pack

    target = target or Path(f"{Path(run_dir).resolve().name}.zip")
    try:
        manifest = make_pack(run_dir, target)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    click.echo(f"Packed {manifest['run_id']}: {len(manifest['files'])} files, "
               f"{manifest['cache_entries']['responses']} cached answer(s) -> {target}", err=True)


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}


def parse_size(text: str) -> int:
    """``4GiB``, ``500MB``, ``1000000`` -> bytes; click.BadParameter otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).upper() if match else ""
    if not match or unit not in _UNITS:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 4GiB, 500MB or a number of bytes)")
    return int(float(match.group(1)) * _UNITS[unit])


@click.command("replay")
@click.argument("pack", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output-dir", "-o", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="An empty (or new) folder for the rebuilt run.")
@click.option("--max-size", "max_size", default="4GiB", show_default=True, metavar="SIZE",
              callback=lambda ctx, param, value: parse_size(value),
              help="Refuse a pack whose members hold more than this, unpacked (e.g. 500MB, 10GiB).")
def replay_command(pack: Path, out_dir: Path, max_size: int) -> None:
    """Rebuild every artifact of an evidence pack with no model, judge or network call, and print the
    files that differ from the packed ones beyond timestamps, durations, paths and how answers were
    obtained (docs/cli.md). A pack is checked before anything is written: only the members pack.json
    lists, each of its size and SHA-256, all within --max-size; a refused pack leaves nothing behind.
    Exit codes: 0 identical, 1 some file differs, 2 bad usage, 3 unreadable or unsafe pack, or an
    answer missing from it."""
    from ..evidence_pack import replay_pack

    try:
        run_dir, report = replay_pack(pack, out_dir, max_size)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    if not report:
        click.echo(f"Replayed into {run_dir}: every file identical to the pack apart from timestamps, "
                   "durations, paths and how answers were obtained")
        return
    click.echo(f"Replayed into {run_dir}: {len(report)} file(s) differ from the pack:")
    for name, diff in report.items():
        click.echo(f"  {name}: {diff[0]}")
    sys.exit(EXIT_EVALUATOR_FAILED)
