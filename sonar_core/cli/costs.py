"""``sonar run --dry-run [--json]``: print what a run would ask and cost (docs/costs.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import names
from ..config import RunConfig
from ..listings import LISTING_SCHEMA_VERSION

__all__ = ["print_estimate", "resumed_config"]


def resumed_config(run_dir: Path) -> RunConfig:
    """The configuration an interrupted run folder was started with (what ``--resume`` runs)."""
    from ..config import build_config
    from ..execution.previous import PreviousRun

    previous = PreviousRun.open(run_dir)
    return build_config(previous.parameters(), str(previous.run_dir / names.RUN_JSON))


def print_estimate(config: RunConfig, as_json: bool) -> None:
    """Dry-run ``config`` and print its estimate: a table on stdout, or with ``as_json`` the JSON object
    (``calls``, ``tokens``, ``cost``: host and judge key -> figure, and ``total``)."""
    from ..execution.dry_run import dry_run, format_estimate

    estimate = dry_run(config)
    if as_json:
        click.echo(json.dumps({"schema_version": LISTING_SCHEMA_VERSION, **estimate}, indent=2, ensure_ascii=False))
        return
    for line in format_estimate(estimate):
        click.echo(line)
