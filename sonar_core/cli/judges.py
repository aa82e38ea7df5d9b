"""``sonar judges``: the LLM (judge) configurations and whether each answers; ``sonar judges calibrate``."""

from __future__ import annotations

import sys

import click

from .. import names
from .common import JSON_OPTION, fail, out, parse_params, plugin_manager
from ..errors import EXIT_OK, SonarError
from ..terminal import RichTable

__all__ = ["judges_command"]


@click.group("judges", invoke_without_command=True)
@click.option("--llm-configs", type=click.Path(dir_okay=False), help="YAML file of LLM configurations "
              "(default: $SONAR_LLM_CONFIGS or ~/.config/sonar/llm-configs.yaml).")
@click.option("--check/--no-check", default=True, help="Ask each configuration for one short answer (default: on).")
@JSON_OPTION
@click.pass_context
def judges_command(ctx: click.Context, llm_configs: str | None, check: bool, as_json: bool) -> None:
    """List LLM (judge) configurations and check that each answers.

    Exit code 1 when a checked configuration does not answer.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..llm.judge_checks import check_configs

    try:
        rows, default_judge, source, failed = check_configs(llm_configs, check=check)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    if as_json:
        from ..listings import to_json
        from ..listings import judges_listing

        click.echo(to_json(judges_listing(rows, default_judge, source)), nl=False)
        sys.exit(1 if failed else EXIT_OK)
    table = RichTable(title=f"LLM configurations ({source or 'built-in only'})")
    for column in ("Key", "Backend", "Model", "Endpoint", "API key variable", "Status"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    out.print(table)
    out.print(f"Default judge: {default_judge}", markup=False)
    sys.exit(1 if failed else EXIT_OK)


#: Version of ``sonar judges calibrate --json``'s shape.


@judges_command.command("calibrate")
@click.option("--judge", "judge_key", metavar="KEY", help="The judge to measure (default: the default judge).")
@click.option("--evaluator", "-e", "evaluator_ids", multiple=True, metavar="ID",
              help="Only this judge evaluator (repeatable; default: every one with a calibration set).")
@click.option("--param", "params", multiple=True, metavar="EVALUATOR.PARAM=VALUE",
              help="Set an evaluator parameter (repeatable), e.g. byop.calibration_set=my-set.jsonl.")
@click.option("--llm-configs", type=click.Path(dir_okay=False), help="YAML file of LLM configurations.")
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="The LLM response cache file; calibration "
              "results are cached next to it (default: $SONAR_HOME/llm-cache.sqlite).")
@click.option("--plugin", "-p", "plugins", multiple=True, metavar="MODULE", help="Also load this plugin module.")
@JSON_OPTION
def judges_calibrate_command(judge_key, evaluator_ids, params, llm_configs, llm_cache, plugins, as_json) -> None:
    """Measure a judge on the judge evaluators' calibration sets: items, accuracy, Cohen's kappa,
    whether a run would trust it (kappa at least the evaluator's min_judge_kappa, default 0.4; an
    untrusted judge's evaluator is not scored), per-label recall and the confusion matrix
    (docs/judges.md). Results are cached: asking again makes no call."""
    import json

    from ..findings.judge_trust import trust_bar
    from ..llm.judge_checks import calibrate_judges

    manager = plugin_manager(plugins)
    try:
        key, results, skipped = calibrate_judges(manager.evaluators, llm_configs, judge=judge_key, only=evaluator_ids,
                                                 params=parse_params(params), cache_path=llm_cache)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    given = parse_params(params)
    # The bar each evaluator's verdicts must clear in a run (its min_judge_kappa, default 0.4).
    bars = {r.evaluator_id: trust_bar(manager.evaluators[r.evaluator_id], given.get(r.evaluator_id, {}))
            for r in results}
    if as_json:
        click.echo(json.dumps({"schema_version": names.CALIBRATION_SCHEMA_VERSION, "judge": key,
                               "results": [{**r.as_dict(), "trusted": r.kappa >= bars[r.evaluator_id],
                                            "min_judge_kappa": bars[r.evaluator_id]} for r in results],
                               "skipped": [{"evaluator_id": e, "reason": why} for e, why in skipped]}, indent=2))
        return
    for result in results:
        name = manager.evaluators[result.evaluator_id].display_name
        confidence = "-" if result.mean_confidence is None else f"{result.mean_confidence:.2f}"
        bar = bars[result.evaluator_id]
        verdict = "trusted" if result.kappa >= bar else f"untrusted (needs κ ≥ {bar:.2f})"
        out.print(f"{name} ({result.evaluator_id}) judged by {key}: {result.items} items, accuracy "
                   f"{result.accuracy:.1%}, kappa {result.kappa:.3f} {verdict}, unreadable {result.unreadable}, mean "
                   f"confidence {confidence}" + (" (cached)" if result.cached else f" ({result.seconds:.1f} s)"),
                   markup=False)
        columns = list(next(iter(result.confusion.values())))
        table = RichTable(title=None)
        table.add_column("true \\ judged")
        for column in columns:
            table.add_column(column, justify="right")
        table.add_column("recall", justify="right")
        for label, row in result.confusion.items():
            recall = result.recall[label]
            table.add_row(label, *(str(row[c]) for c in columns), "-" if recall is None else f"{recall:.1%}")
        out.print(table)
    for eid, why in skipped:
        out.print(f"{eid}: skipped, {why}", markup=False)
