"""The ``sonar`` command line: run, evaluators, describe, plugins, perturbators, hosts, catalogue; the
``models`` and ``judges`` groups live in :mod:`.cli_models` and :mod:`.cli_judges`.

Every error a user can cause is one line on stderr, ``error: <what is wrong>``, and an exit
code from :mod:`sonar_core.errors` (documented in docs/cli.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .cli_common import (JSON_OPTION, OneLineGroup, fail, one_line, out, parse_hosts, parse_params,
                         parse_thresholds, plugin_manager)
from .cli_compare import compare_command
from .cli_costs import print_estimate, resumed_config
from .cli_benchmarks import benchmarks_command, calibrate_command, describe_benchmark_command
from .cli_generate import generate_command
from .cli_judges import judges_command
from .cli_pack import pack_command, replay_command
from .cli_models import models_command
from .cli_traces import trace_overrides, trace_run_options, traces_command
from .cli_redteam import redteam_command
from .cli_view import view_command
from .errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, SonarError
from .terminal import RichTable, RichText

__all__ = ["main", "cli"]

@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sonar-eval", prog_name="sonar")
def cli() -> None:
    """Sonar: evaluate LLM and RAG systems with pluggable evaluators."""


@cli.command("run")
@click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", "-d", help="Dataset file (.json, .jsonl, .csv) or 'demo' for the bundled one.")
@click.option("--evaluator", "-e", "evaluators", multiple=True,
              help="Evaluator id to run (repeatable); 'offline' means every evaluator that runs offline.")
@click.option("--param", "params", multiple=True, metavar="EVALUATOR.PARAM=VALUE",
              help="Set an evaluator parameter (repeatable).")
@click.option("--output-dir", "-o", help="Folder that receives the run folder (default: reports).")
@click.option("--run-id", help="Name of the run folder (default: <name>-<timestamp>).")
@click.option("--threshold", "thresholds", multiple=True, metavar="METRIC=VALUE",
              help="Override a metric's threshold for every evaluator that has it (repeatable).")
@click.option("--strict", is_flag=True, default=None,
              help="Fail (exit 4) on a plugin load error, an evaluator whose inputs are missing, or one that "
                   "scored with a fallback model.")
@click.option("--fail-on-problems", type=click.Choice(["HIGH", "MEDIUM", "LOW"], case_sensitive=False),
              help="Exit 5 when a problem of this severity or worse is found (a CI gate).")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE",
              help="Also load this Python module as a plugin (repeatable).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Finish an interrupted run folder: only evaluators without a done marker run.")
@click.option("--device", help="Where models run: auto (CUDA when visible, else CPU; the default), cpu, cuda.")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on a terminal).")
@click.option("--llm-configs", type=click.Path(dir_okay=False), help="YAML file of LLM (judge) configurations.")
@click.option("--judge", "default_judge", metavar="KEY", help="Default judge: an LLM configuration key (sonar judges).")
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="LLM response cache file (SQLite).")
@click.option("--no-cache", is_flag=True, default=None, help="Neither read nor write the LLM response cache.")
@click.option("--refresh-cache", is_flag=True, default=None,
              help="Ask the LLMs again instead of using cached answers (new answers are cached).")
@click.option("--csv-formula-escape/--no-csv-formula-escape", "csv_formula_escape", default=None,
              help="Prefix CSV text cells starting with = + - @ tab or CR with ' (default: on).")
@click.option("--test-suite", help="Test cases without answers: ask the hosts, then score their answers.")
@click.option("--host", "hosts", multiple=True, metavar="YAML",
              help="A model under test as a YAML mapping, e.g. '{key: m, kind: openai_chat, model: m, "
                   "base_url: http://...}' (repeatable; replaces the file's hosts; docs/hosts.md).")
@click.option("--calibrate/--no-calibrate", "calibrate", default=None,
              help="Measure each judge on its evaluator's calibration set before scoring (default: on; cached). "
                   "--no-calibrate skips it, and the report says the judges are uncalibrated.")
@click.option("--calibration-items", type=int, default=None, metavar="N",
              help="Calibrate on a balanced subset of at most N items per set (default: every item).")
@click.option("--score-untrusted", is_flag=True, default=None,
              help="Score the rows of an evaluator whose judge fails calibration anyway (verdicts marked untrusted, "
                   "not counted); without it those rows are not scored and the judge is not asked.")
@click.option("--confidence-level", type=float, default=None, metavar="C",
              help="Confidence of every interval, between 0 and 1 (default: 0.95); tests use 1 - C as significance level.")
@click.option("--bootstrap-resamples", type=int, default=None, metavar="N",
              help="Bootstrap replicates per score interval and sign patterns per paired test (default: 2000).")
@click.option("--benchmark", "-b", metavar="UID", help="Score and grade a benchmark (sonar benchmarks; docs/benchmarks.md).")
@click.option("--standards", metavar="FILE", help="Standards file to grade against (default: the benchmark's own).")
@click.option("--min-grade", type=click.IntRange(1, 5), default=None, metavar="N",
              help="A grade below N (1 Poor .. 5 Excellent) is a HIGH problem: with --fail-on-problems, exit 5.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="Where rows are scored: local (default) or ray (a Ray cluster; docs/scale-out.md).")
@click.option("--ray-address", metavar="ADDRESS",
              help="Ray cluster to join with --executor ray: 'auto' (the running one) or an address "
                   "(default: start a local Ray instance).")
@click.option("--ray-shard-rows", type=int, default=None, metavar="N", help="Rows per Ray shard (default: batch size).")
@click.option("--epochs", type=int, default=None, metavar="N",
              help="Ask every host every test case N times (docs/epochs.md; default 1).")
@click.option("--epoch-reducer", default=None, metavar="R",
              help="How a test case's epochs become one value: mean (default), majority, pass_at_k, pass_hat_k, "
                   "or pass_at_K / pass_hat_K for K of the epochs, e.g. pass_at_2 (docs/epochs.md).")
@click.option("--max-cost", type=float, default=None, metavar="USD",
              help="Budget: stop asking (exit 7) before a call would take the priced spending past USD; "
                   "--resume with a higher budget finishes the run (docs/costs.md).")
@click.option("--dry-run", is_flag=True, help="Ask nothing: print per host and judge the calls still needed after "
                                               "cache lookups, their estimated tokens and cost (docs/costs.md).")
@click.option("--json", "as_json", is_flag=True, help="With --dry-run: print the estimate as JSON (docs/cli.md).")
@trace_run_options
def run_command(config: Path | None, dataset, evaluators, params, output_dir, run_id, thresholds, strict,
                fail_on_problems, plugins, resume_dir, device, progress, llm_configs, default_judge, llm_cache,
                no_cache, refresh_cache, csv_formula_escape, test_suite, hosts, calibrate,
                calibration_items, confidence_level, bootstrap_resamples, benchmark=None, standards=None,
                min_grade=None, executor=None, ray_address=None, ray_shard_rows=None, epochs=None,
                epoch_reducer=None, max_cost=None, dry_run=False, as_json=False, score_untrusted=None,
                **trace_flags) -> None:
    """Run evaluators over a dataset and write a result folder.

    CONFIG is a YAML run configuration (see configs/quickstart.yaml); flags override its keys.
    Exit codes: 0 ok, 1 an evaluator failed or nothing could be scored, 2 bad usage or configuration,
    3 bad dataset, 4 strict-mode failure, 5 --fail-on-problems gate, 6 output folder not writable,
    7 --max-cost budget reached (resume with a higher --max-cost), 130 interrupted (resume with --resume).
    """
    from .api import resume
    from .config import load_config
    from .findings.run_findings import problem_counts
    from .execution import execute_run

    show = sys.stderr.isatty() if progress is None else progress
    if as_json and not dry_run:
        fail("--json goes with --dry-run (a run's record is its run.json)", EXIT_USAGE)
    if max_cost is not None and not max_cost > 0:
        fail(f"--max-cost must be a positive amount of USD, not {max_cost:g}", EXIT_USAGE)
    try:
        if resume_dir is not None and dry_run:
            return print_estimate(resumed_config(resume_dir), as_json)
        if resume_dir is not None:
            result = resume(resume_dir, progress=show, executor=executor, ray_address=ray_address,
                            ray_shard_rows=ray_shard_rows, max_cost=max_cost)
        else:
            if config is None and not dataset and not test_suite and not trace_flags.get("traces"):
                fail("give a CONFIG file, --dataset, --test-suite or --traces (try: sonar run configs/quickstart.yaml)",
                      EXIT_USAGE)
            if no_cache and refresh_cache:
                fail("--no-cache and --refresh-cache exclude each other", EXIT_USAGE)
            overrides: dict[str, Any] = {
                "dataset": dataset, "output_dir": output_dir, "run_id": run_id, "strict": strict,
                "fail_on_problems": fail_on_problems, "plugins": plugins, "device": device,
                "thresholds": parse_thresholds(thresholds), "llm_configs": llm_configs,
                "default_judge": default_judge, "llm_cache": llm_cache, "no_cache": no_cache,
                "refresh_cache": refresh_cache, "csv_formula_escape": csv_formula_escape,
                "test_suite": test_suite, "hosts": parse_hosts(hosts),
                "calibrate": calibrate, "calibration_items": calibration_items, "score_untrusted": score_untrusted,
                "confidence_level": confidence_level, "bootstrap_resamples": bootstrap_resamples,
                "benchmark": benchmark, "standards": standards, "min_grade": min_grade,
                "executor": executor, "ray_address": ray_address, "ray_shard_rows": ray_shard_rows,
                "epochs": epochs, "epoch_reducer": epoch_reducer,
                "max_cost": max_cost, "traces": trace_overrides(trace_flags),
            }
            if evaluators:
                overrides["evaluators"] = list(evaluators)
            cfg = load_config(config, overrides)
            per_evaluator = parse_params(params)
            if per_evaluator:
                specs = cfg.specs()
                listed = {s.label for s in specs}
                for name in per_evaluator:
                    if name not in listed:
                        fail(f"--param names evaluator '{name}', which is not listed in this run", EXIT_USAGE)
                specs = [s.model_copy(update={"params": {**s.params, **per_evaluator.get(s.label, {})}})
                         for s in specs]
                cfg = cfg.model_copy(update={"evaluators": specs})
            if dry_run:
                return print_estimate(cfg, as_json)
            result = execute_run(cfg, progress=show)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    except KeyboardInterrupt:  # before the run could record anything (loading, a dry run): still exit 130
        fail("interrupted", EXIT_INTERRUPTED)
        return
    except OSError as exc:  # a path given on the command line that cannot be read (the run's writes are exit 6)
        fail(f"{exc.filename}: {exc.strerror or type(exc).__name__}", EXIT_USAGE)
        return
    counts = problem_counts(result.problems)
    say = lambda text: click.echo(text, err=True)  # noqa: E731
    say(f"Run {result.status}: {result.run_dir}")
    say(f"  evaluators: {len(result.executed)} run, {len(result.failed)} failed, {len(result.skipped)} skipped; "
        f"problems: {counts['HIGH']} high, {counts['MEDIUM']} medium, {counts['LOW']} low")
    for skipped in result.skipped:
        say(f"  skipped {skipped['evaluator']}: {skipped['reason']}")
    if (result.run_dir / "benchmark" / "report.md").is_file():
        say(f"  grades: {result.run_dir / 'benchmark' / 'report.md'}")
    say(f"  open {result.run_dir / 'index.html'}")
    if result.exit_code != EXIT_OK:
        click.echo(f"error: {one_line(result.message)}", err=True)
    sys.exit(result.exit_code)


@cli.command("evaluators")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def evaluators_command(plugins, as_json: bool) -> None:
    """List installed evaluators and the inputs each needs.

    Columns: LLM/RAG compatibility, judge (J), required inputs (Q/EA/RC/AA/C/CV/TC/EO), GPU; a legend
    under the table says what each means. On a narrow terminal the flags are grouped.
    """
    from .listings import evaluators_listing, print_evaluators, to_json

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
        from .listings import evaluator_description, to_json

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
        from .catalogue import DIFFERENCES_TITLE, difference_lines

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
        from .listings import plugins_listing, to_json

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

    from .perturbations import make_perturbator, perturbators

    manager = plugin_manager(plugins)
    if as_json:
        from .listings import to_json
        from .service_listings import perturbators_listing

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
    from .listings import hosts_listing, to_json

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
    from .catalogue import render_catalogue

    text = render_catalogue(plugin_manager())
    if target is None:
        click.echo(text, nl=False)
    else:
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}", err=True)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
