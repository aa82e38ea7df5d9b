"""``sonar generate``: a test suite written from your own documents, every item's quality measured
(docs/generate.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .common import fail, one_line
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, SonarError

__all__ = ["generate_command", "parse_types"]


def parse_types(value: str | None) -> dict[str, float] | None:
    """``single_hop=4,unanswerable=1`` -> weights (None when not given)."""
    if not value:
        return None
    weights: dict[str, float] = {}
    for part in value.split(","):
        name, sep, weight = part.partition("=")
        try:
            weights[name.strip()] = float(weight) if sep else 1.0
        except ValueError:
            raise click.BadParameter(f"'{part}': expected TYPE=WEIGHT") from None
    return weights


@click.command("generate")
@click.option("--docs", "docs", multiple=True, required=True, metavar="PATH",
              help="A document file or folder (.txt, .md, .html, .pdf, .jsonl chunks {id, text, source}), or 'demo' for the bundled documents; repeatable.")
@click.option("-n", "n", type=int, default=20, show_default=True, help="Items to write (kept items may be fewer).")
@click.option("-o", "--output", default="generated/suite.jsonl", show_default=True, metavar="SUITE.jsonl",
              help="The suite file; its folder receives <stem>.report.html/.json, <stem>.graph.json and "
                   "<stem>.journal.jsonl.")
@click.option("--judge", metavar="KEY", help="The generator model: an LLM configuration key (default: the default "
                                             "judge, offline local-smollm2).")
@click.option("--quality-judge", metavar="KEY", help="The model judging groundedness and answerability (default: --judge).")
@click.option("--seed", type=int, default=0, show_default=True, help="Chooses the chunks, types, personas and styles.")
@click.option("--spread", type=click.Choice(["sources", "topics", "proportional"]), default="sources", show_default=True,
              help="Items spread evenly over source files, over topics, or in proportion to each file's chunks.")
@click.option("--types", metavar="TYPE=W,...", help="Question type weights (single_hop, multi_hop, comparison, summary, "
                                                   "unanswerable); default 4,2,1,1,2.")
@click.option("--persona", "personas", multiple=True, metavar="TEXT", help="Who asks (repeatable), dealt out in turn.")
@click.option("--style", "styles", multiple=True, type=click.Choice(["plain", "misspelt", "search-box", "long"]),
              help="Question styles (repeatable), dealt out in turn (default: plain).")
@click.option("--min-quality", type=float, default=None, metavar="Q",
              help="Least share of quality checks an item must pass to be kept (default 1: all).")
@click.option("--keep-low-quality", is_flag=True, help="Keep items below --min-quality in the suite, flagged.")
@click.option("--calibrate/--no-calibrate", default=True, show_default=True,
              help="Measure the quality judge on its labelled sets first (cached); without, its scores are uncalibrated.")
@click.option("--llm-configs", type=click.Path(dir_okay=False), help="YAML file of LLM configurations (docs/judges.md).")
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="LLM response cache file (SQLite).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM response cache.")
@click.option("--max-cost", type=float, default=None, metavar="USD",
              help="Stop (exit 7) before a call would take the priced spending past USD (prices in the LLM configuration "
                   "are not read: give them in a run configuration's generate: section).")
@click.option("--device", default="auto", show_default=True, help="Where the embedding model runs.")
@click.option("--dry-run", is_flag=True, help="Ask nothing, write nothing: print the calls still needed, their tokens and cost.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome (or the dry run's estimate) as JSON.")
@click.option("--progress/--no-progress", default=None, help="Progress lines on stderr (default: on a terminal).")
def generate_command(docs, n, output, judge, quality_judge, seed, spread, types, personas, styles, min_quality,
                     keep_low_quality, calibrate, llm_configs, llm_cache, no_cache, max_cost, device, dry_run, as_json,
                     progress) -> None:
    """Write a test suite from your own documents, every item's quality measured.

    The suite (-o) is taken as it is by `sonar run --test-suite`. Exit codes: 0 items written, 1 no item
    kept (the report says why), 2 bad usage or configuration, 3 unusable documents, 6 output folder not
    writable, 7 --max-cost reached (run again with a higher budget: finished items are cached).
    """
    from ..generate_config import GenerateSpec
    from ..generation.run import run_generation

    show = sys.stderr.isatty() if progress is None else progress
    say = (lambda text: click.echo(f"generate: {text}", err=True)) if show else None
    try:
        settings = {"docs": list(docs), "n": n, "output": output, "judge": judge, "quality_judge": quality_judge,
                    "seed": seed, "spread": spread, "types": parse_types(types), "personas": list(personas),
                    "styles": list(styles) or ["plain"], "keep_low_quality": keep_low_quality, "calibrate": calibrate,
                    "llm_configs": llm_configs, "llm_cache": llm_cache, "no_cache": no_cache, "max_cost": max_cost,
                    "device": device}
        if min_quality is not None:
            settings["min_quality"] = min_quality
        spec = _spec(GenerateSpec, settings)
        result = run_generation(spec, dry_run=dry_run, progress=say)
    except click.BadParameter as exc:
        fail(f"--types {exc.message}", EXIT_USAGE)
        return
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    except OSError as exc:
        fail(f"{exc.filename}: {exc.strerror or type(exc).__name__}", EXIT_USAGE)
        return
    except KeyboardInterrupt:  # Ctrl-C: every answer so far is cached; the same command goes on from there
        fail("interrupted: the items answered so far are cached; run the same command again to go on",
             EXIT_INTERRUPTED)
        return
    if dry_run:
        _print_estimate(result.estimate, as_json)
        return
    if as_json:
        click.echo(json.dumps({"exit_code": result.exit_code, "message": result.message,
                               "files": {k: str(v) for k, v in result.files.items()},
                               "counts": result.findings.counts}, indent=2))
    else:
        click.echo(f"Generated: {result.message}", err=True)
        if "report_html" in result.files:
            click.echo(f"  open {result.files['report_html']}", err=True)
    if result.exit_code != EXIT_OK:
        click.echo(f"error: {one_line(result.message)}", err=True)
    sys.exit(result.exit_code)


def _spec(cls, settings):
    from pydantic import ValidationError

    from ..errors import ConfigError, validation_message

    try:
        return cls.model_validate(settings)
    except ValidationError as exc:
        raise ConfigError(f"<command line>: {validation_message(exc, 'setting')}") from None


def _print_estimate(estimate, as_json: bool) -> None:
    from ..execution.dry_run import format_estimate
    from ..listings import LISTING_SCHEMA_VERSION

    if as_json:
        click.echo(json.dumps({"schema_version": LISTING_SCHEMA_VERSION, **estimate}, indent=2, ensure_ascii=False))
        return
    for line in format_estimate(estimate):
        click.echo(line)
