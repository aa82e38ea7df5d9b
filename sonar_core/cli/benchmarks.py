"""``sonar benchmarks``, ``sonar describe-benchmark`` and ``sonar calibrate`` (docs/benchmarks.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import JSON_OPTION, fail, out, parse_hosts, plugin_manager
from .settings import run_options, settings_from_flags
from ..errors import EXIT_OK, EXIT_USAGE, SonarError
from ..listing_shapes import BenchmarkDescription, BenchmarkEntry
from ..terminal import RichTable

__all__ = ["benchmarks_command", "describe_benchmark_command", "calibrate_command", "benchmark_listing",
           "benchmark_description"]

#: The run settings ``sonar calibrate`` takes as ``sonar run`` does: their options are made from RunConfig's fields.
CALIBRATE_SETTINGS = ("dataset", "test_suite", "output_dir", "run_id", "plugins")


def benchmark_listing(manager) -> list[BenchmarkEntry]:
    """Every registered benchmark: uid, version, name, hazards, tests, plugin, default standards."""
    from ..benchmarks.registry import benchmarks

    registry = manager.registry("register_benchmarks")
    return [{"uid": uid, "version": d.version, "name": d.title, "hazards": [h.uid for h in d.hazards],
             "tests": [t.uid for t in d.tests], "plugin": registry.owner(uid),
             "standards": str(d.standards_path()) if d.standards_path() else None}
            for uid, d in benchmarks(manager).items()]


def benchmark_description(definition, plugin: str | None) -> BenchmarkDescription:
    """One benchmark as a tree: hazards, each with its tests (evaluator, routing, safe rule), and its references."""
    from ..benchmarks.standards import read_standards

    path = definition.standards_path()
    references: dict[str, float] = {}
    if path is not None and path.is_file():
        references = read_standards(path).reference
    return {"uid": definition.uid, "version": definition.version, "name": definition.title,
            "description": definition.description, "plugin": plugin, "source": definition.source,
            "standards": str(path) if path else None,
            "hazards": [{"uid": h.uid, "hazard_key": h.hazard_key, "name": h.title, "description": h.description,
                         "reference": references.get(h.hazard_key),
                         "tests": [{"uid": t, **definition.test(t).initialization()} for t in h.tests]}
                        for h in definition.hazards]}


@click.command("benchmarks")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def benchmarks_command(plugins, as_json: bool) -> None:
    """List registered benchmarks: their hazards, tests and default standards."""
    manager = plugin_manager(plugins)
    listing = benchmark_listing(manager)
    if as_json:
        from ..listings import LISTING_SCHEMA_VERSION, to_json

        click.echo(to_json({"schema_version": LISTING_SCHEMA_VERSION, "benchmarks": listing,
                            "plugin_failures": [{"plugin": f.name, "stage": f.stage, "error": f.error}
                                                for f in manager.failures]}), nl=False)
    else:
        table = RichTable(title="Sonar benchmarks")
        for column in ("Uid", "Version", "Name", "Hazards", "Tests", "Plugin"):
            table.add_column(column)
        for entry in listing:
            table.add_row(entry["uid"], entry["version"], entry["name"], ", ".join(entry["hazards"]),
                          ", ".join(entry["tests"]), entry["plugin"] or "")
        out.print(table)
    for failure in manager.failures:
        click.echo(f"warning: {failure.message()}", err=True)


@click.command("describe-benchmark")
@click.argument("uid")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def describe_benchmark_command(uid: str, plugins, as_json: bool) -> None:
    """Show one benchmark as a tree: hazards, their tests, and each hazard's reference score."""
    from ..benchmarks.registry import get_benchmark

    manager = plugin_manager(plugins)
    try:
        definition = get_benchmark(manager, uid)
        tree = benchmark_description(definition, manager.registry("register_benchmarks").owner(uid))
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    if as_json:
        from ..listings import LISTING_SCHEMA_VERSION, to_json

        click.echo(to_json({"schema_version": LISTING_SCHEMA_VERSION, **tree}), nl=False)
        return
    say = lambda text: out.print(text, markup=False, highlight=False)  # noqa: E731 (names come from plugins)
    say(f"{tree['name']} ({tree['uid']}, version {tree['version']}; plugin {tree['plugin']})")
    if tree["description"]:
        say(tree["description"])
    say(f"standards: {tree['standards'] or 'none (give --standards FILE)'}")
    for hazard in tree["hazards"]:
        reference = "none" if hazard["reference"] is None else f"{hazard['reference']:.4f}"
        say(f"├─ hazard {hazard['uid']} ({hazard['name']}; key {hazard['hazard_key']}; reference {reference})")
        for test in hazard["tests"]:
            rule = test["safe"]
            safe = (f"{rule['metric'] or 'primary metric'} at "
                    f"{'the threshold in force' if rule['threshold'] is None else rule['threshold']}")
            rows = ", ".join(test["categories"]) or "every row"
            say(f"│  └─ test {test['uid']}: evaluator {test['evaluator']}; rows: {rows}; safe: {safe}")


def _reference_and_hosts(values: tuple[str, ...]) -> tuple[list[str], list[dict[str, object]]]:
    """``--host`` values: plain keys name reference models or hosts; YAML mappings are hosts to ask."""
    keys = [v.strip() for v in values if not v.strip().startswith("{")]
    hosts = parse_hosts(tuple(v for v in values if v.strip().startswith("{")))
    return keys + [h["key"] for h in hosts if "key" in h], hosts


@click.command("calibrate")
@click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--benchmark", "-b", required=True, metavar="UID", help="The benchmark to calibrate (sonar benchmarks).")
@click.option("--host", "hosts", multiple=True, metavar="KEY|YAML",
              help="A reference host: a model of the dataset or a host of CONFIG by key, or a host to ask as a "
                   "YAML mapping with --test-suite (repeatable; default: every model).")
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The standards file to write.")
@run_options(*CALIBRATE_SETTINGS, long_only=("output_dir",))  # -o is --output, the standards file
def calibrate_command(config: Path | None, benchmark: str, hosts, output: Path, dataset, test_suite, output_dir,
                      run_id, plugins) -> None:
    """A calibration run: score the benchmark on the reference hosts and write a standards file.

    Each hazard's reference is the lowest score among the reference hosts (as ModelBench sets it).
    No grades are given; later runs grade against the file (sonar run --benchmark UID --standards FILE).
    """
    from ..config import load_config
    from ..execution import execute_run

    if config is None and not dataset and not test_suite:
        fail("give a CONFIG file, --dataset or --test-suite (try: sonar calibrate --benchmark assistant_safety "
             "--dataset demo --host acme-gpt-large -o standards.json)", EXIT_USAGE)
    try:
        keys, asked = _reference_and_hosts(hosts)
        given = {"dataset": dataset, "test_suite": test_suite, "output_dir": output_dir, "run_id": run_id,
                 "plugins": plugins}
        overrides: dict[str, object] = {
            **settings_from_flags(given, only=CALIBRATE_SETTINGS), "benchmark": benchmark,
            "standards_output": str(output.resolve()), "reference_hosts": keys, "hosts": asked,
        }
        cfg = load_config(config, overrides)
        if "name" not in cfg.model_fields_set:
            cfg = cfg.model_copy(update={"name": f"calibrate-{benchmark}"})
        result = execute_run(cfg, progress=sys.stderr.isatty())
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    click.echo(f"Calibration run {result.status}: {result.run_dir}", err=True)
    if output.is_file():
        click.echo(f"  wrote {output}", err=True)
    if result.exit_code != EXIT_OK:
        click.echo(f"error: {result.message}", err=True)
    sys.exit(result.exit_code)
