"""The ``sonar`` command line: the group, and evaluators, describe, plugins, perturbators, hosts, catalogue;
``run`` lives in :mod:`.run`, the ``models`` and ``judges`` groups in :mod:`.models` and :mod:`.judges`.

Every error a user can cause is one line on stderr, ``error: <what is wrong>``, and an exit
code from :mod:`sonar_core.errors` (documented in docs/cli.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import JSON_OPTION, OneLineGroup, fail, out, plugin_manager
from .compare import compare_command
from .benchmarks import benchmarks_command, calibrate_command, describe_benchmark_command
from .generate import generate_command
from .judges import judges_command
from .pack import pack_command, replay_command
from .models import models_command
from .traces import traces_command
from .redteam import redteam_command
from .view import view_command
from .run import run_command
from ..errors import SonarError
from ..terminal import RichTable, RichText

__all__ = ["main", "cli"]

@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sonar-eval", prog_name="sonar")
def cli() -> None:
    """Sonar: evaluate LLM and RAG systems with pluggable evaluators."""


@cli.command("evaluators")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def evaluators_command(plugins, as_json: bool) -> None:
    """List installed evaluators and the inputs each needs.

    Columns: LLM/RAG compatibility, judge (J), required inputs (Q/EA/RC/AA/C/CV/TC/EO), GPU; a legend
    under the table says what each means. On a narrow terminal the flags are grouped.
    """
    from ..listings import evaluators_listing, print_evaluators, to_json

    manager = plugin_manager(plugins)
    if as_json:
        click.echo(to_json(evaluators_listing(manager)), nl=False)
    else:
        print_evaluators(manager, out)
    for failure in manager.failures:
        click.echo(f"warning: {failure.message()}", err=True)


@cli.command("describe")
@click.argument("evaluator_id")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def describe_command(evaluator_id: str, plugins, as_json: bool) -> None:
    """Show one evaluator's metrics and parameters.

    EVALUATOR_ID is an id from `sonar evaluators` (or a qualified class name).
    """
    manager = plugin_manager(plugins)
    try:
        cls = manager.resolve(evaluator_id)
    except SonarError as exc:
        fail(str(exc), exc.exit_code)
        return
    if as_json:
        from ..listings import evaluator_description, to_json

        click.echo(to_json(evaluator_description(cls, manager)), nl=False)
        return
    out.print(f"[bold]{cls.display_name}[/bold] ([cyan]{cls.id}[/cyan], {cls.qualified_name()})")
    if cls.tagline:
        out.print(cls.tagline)
    out.print(cls.description)
    out.print(f"Required inputs: {', '.join(i.value for i in cls.required_inputs) or 'none'}"
               + (f"; optional: {', '.join(i.value for i in cls.optional_inputs)}" if cls.optional_inputs else ""))
    out.print(f"Result kind: {cls.kind.value}; judge: {'yes' if cls.requires_judge else 'no'}; "
               f"GPU: {'yes' if cls.supports_gpu else 'no'}; plugin: {manager.owner_of(cls.id)}")
    if reason := cls.missing_extra():
        out.print(f"Not installed: {reason}", markup=False, highlight=False)
    metrics = RichTable(title="Metrics")
    for column in ("Key", "Name", "Range", "Better", "Threshold", "Primary"):
        metrics.add_column(column)
    for m in cls.metrics:
        metrics.add_row(m.key, m.display_name, f"[{m.value_range[0]:g}, {m.value_range[1]:g}]",
                        "higher" if m.higher_is_better else "lower", f"{m.threshold:g}", "★" if m.is_primary else "")
    out.print(metrics)
    params = RichTable(title="Parameters")
    for column in ("Name", "Type", "Default", "Description"):
        params.add_column(column)
    for p in cls.all_parameters():
        params.add_row(p.name, p.type.__name__, repr(p.default), p.description)
    out.print(params)
    if prompt := cls.judge_prompt():
        # Prompts hold [BEGIN DATA]-style brackets: print them as they are, not as rich markup.
        out.print("[bold]Judge prompt[/bold] (placeholders are filled from each row):")
        out.print(prompt, markup=False, highlight=False)
    if cls.differences:
        from ..catalogue import DIFFERENCES_TITLE, difference_lines

        out.print(f"[bold]{DIFFERENCES_TITLE}[/bold]")
        for line in difference_lines(cls.differences):
            out.print(line, markup=False, highlight=False)


@cli.command("plugins")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def plugins_command(plugins, as_json: bool) -> None:
    """List plugins, their evaluators, and load failures."""
    manager = plugin_manager(plugins)
    if as_json:
        from ..listings import plugins_listing, to_json

        click.echo(to_json(plugins_listing(manager)), nl=False)
        return
    table = RichTable(title="Sonar plugins")
    for column in ("Name", "Distribution", "Version", "Hooks", "Evaluators"):
        table.add_column(column)
    for info in manager.plugins:
        table.add_row(info.name, info.distribution, info.version, ", ".join(info.hooks), ", ".join(info.evaluators))
    out.print(table)
    if manager.failures:
        failed = RichTable(title="Plugins that failed to load")
        for column in ("Name", "Stage", "Error"):
            failed.add_column(column)
        for failure in manager.failures:
            failed.add_row(failure.name, failure.stage, failure.error)
        out.print(failed)


@cli.command("perturbators")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@click.option("--text", help="Show each perturbator's output for this text (default parameters).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --text.")
@JSON_OPTION
def perturbators_command(plugins, text: str | None, seed: int, as_json: bool) -> None:
    """List perturbators (for `perturb:` in a run configuration) with their parameters and defaults."""
    import numpy as np

    from ..perturbations import make_perturbator, perturbators

    manager = plugin_manager(plugins)
    if as_json:
        from ..listings import to_json
        from ..listings import perturbators_listing

        click.echo(to_json(perturbators_listing(manager, text, seed)), nl=False)
        return
    table = RichTable(title="Sonar perturbators")
    for column in ("Name", "Parameters (default)", "Seeded", "Description", *(["Output"] if text is not None else [])):
        table.add_column(column)
    for name, cls in perturbators(manager).items():
        params = ", ".join(f"{p.name}={p.default!r}" for p in cls.parameters) or "-"
        cells = [name, params, "yes" if cls.random else "no", cls.description]
        if text is not None:
            cells.append(make_perturbator(name, plugins=manager).apply(text, np.random.default_rng(seed)))
        # Texts and a plugin's descriptions are data, not rich markup.
        table.add_row(*(RichText(cell) for cell in cells))
    out.print(table)
    for failure in manager.failures:
        click.echo(f"warning: {failure.message()}", err=True)


@cli.command("hosts")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def hosts_command(plugins, as_json: bool) -> None:
    """List model host kinds (for `hosts:` in a run configuration) with their settings.

    Settings every kind has are listed first; each kind shows the settings it adds, and the
    shared ones whose default it changes. docs/hosts.md describes each kind.
    """
    from ..listings import hosts_listing, to_json

    manager = plugin_manager(plugins)
    listing = hosts_listing(manager)
    if as_json:
        click.echo(to_json(listing), nl=False)
    else:
        def shown(setting: dict) -> str:
            return f"{setting['name']} (required)" if setting["required"] else f"{setting['name']}={setting['default']!r}"

        out.print("Settings every kind has: " + ", ".join(shown(s) for s in listing["common_settings"]),
                   markup=False, highlight=False)
        table = RichTable(title="Sonar host kinds")
        for column in ("Kind", "Plugin", "Settings (default)", "Description"):
            table.add_column(column)
        for entry in listing["host_kinds"]:
            if entry["settings"] is None:
                settings = "(not declared)"
            else:
                settings = ", ".join(shown(s) for s in entry["settings"]) or "-"
            # A plugin's descriptions are data, not rich markup.
            table.add_row(*(RichText(cell) for cell in (entry["kind"], entry["plugin"], settings,
                                                         entry["description"])))
        out.print(table)
    for failure in manager.failures:
        click.echo(f"warning: {failure.message()}", err=True)


cli.add_command(run_command)
cli.add_command(models_command)
cli.add_command(judges_command)
cli.add_command(compare_command)
cli.add_command(pack_command)
cli.add_command(replay_command)
cli.add_command(benchmarks_command)
cli.add_command(describe_benchmark_command)
cli.add_command(calibrate_command)
cli.add_command(traces_command)
cli.add_command(generate_command)
cli.add_command(redteam_command)
cli.add_command(view_command)


@cli.command("catalogue")
@click.option("--write", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the catalogue to this file instead of printing it.")
def catalogue_command(target: Path | None) -> None:
    """Print the built-in evaluator catalogue as markdown."""
    from ..catalogue import render_catalogue

    text = render_catalogue(plugin_manager())
    if target is None:
        click.echo(text, nl=False)
    else:
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}", err=True)


def main() -> None:
    cli()

