"""``sonar run``: its setting options come from the run configuration's fields (:mod:`.settings`); the
options declared here are the command's own (``--param``, ``--resume``, ``--progress``, ``--dry-run``,
``--json``), which set no configuration key.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import EXECUTION_KEYS, RunConfig
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, SonarError
from .common import fail, one_line, parse_params
from .costs import print_estimate, resumed_config
from .settings import Flags, setting_options, settings_from_flags

__all__ = ["make_run_command", "run_command", "OWN_OPTIONS"]

#: The destinations of the options that are the command's own, not settings.
OWN_OPTIONS = ("config", "params", "resume_dir", "progress", "dry_run", "as_json")


def make_run_command(model: type[RunConfig] = RunConfig) -> click.Command:
    """The ``run`` command for ``model`` (RunConfig, or a subclass that adds settings)."""

    @click.command("run")
    @click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path))
    @setting_options(model)
    @click.option("--param", "params", multiple=True, metavar="EVALUATOR.PARAM=VALUE",
                  help="Set an evaluator parameter (repeatable).")
    @click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path),
                  help="Finish an interrupted run folder: only evaluators without a done marker run.")
    @click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on a terminal).")
    @click.option("--dry-run", is_flag=True, help="Ask nothing: print per host and judge the calls still needed after "
                                                   "cache lookups, their estimated tokens and cost (docs/costs.md).")
    @click.option("--json", "as_json", is_flag=True, help="With --dry-run: print the estimate as JSON (docs/cli.md).")
    def run_command(config: Path | None, params: tuple[str, ...], resume_dir: Path | None, progress: bool | None,
                    dry_run: bool, as_json: bool, **flags: object) -> None:
        """Run evaluators over a dataset and write a result folder.

        CONFIG is a YAML run configuration (see configs/quickstart.yaml); flags override its keys.
        Exit codes: 0 ok, 1 an evaluator failed or nothing could be scored, 2 bad usage or configuration,
        3 bad dataset, 4 strict-mode failure, 5 --fail-on-problems gate, 6 output folder not writable,
        7 --max-cost budget reached (resume with a higher --max-cost), 130 interrupted (resume with --resume).
        """
        _run(model, config, params, resume_dir, progress, dry_run, as_json, flags)

    return run_command


def _run(model: type[RunConfig], config: Path | None, params: tuple[str, ...], resume_dir: Path | None,
         progress: bool | None, dry_run: bool, as_json: bool, flags: Flags) -> None:
    from ..api import resume
    from ..config import load_config
    from ..execution import execute_run

    show = sys.stderr.isatty() if progress is None else progress
    if as_json and not dry_run:
        fail("--json goes with --dry-run (a run's record is its run.json)", EXIT_USAGE)
    max_cost = flags.get("max_cost")
    if max_cost is not None and not max_cost > 0:
        fail(f"--max-cost must be a positive amount of USD, not {max_cost:g}", EXIT_USAGE)
    try:
        if resume_dir is not None and dry_run:
            return print_estimate(resumed_config(resume_dir), as_json)
        if resume_dir is not None:
            result = resume(resume_dir, progress=show, **{key: flags.get(key) for key in EXECUTION_KEYS})
        else:
            if config is None and not flags.get("dataset") and not flags.get("test_suite") and not flags.get("traces"):
                fail("give a CONFIG file, --dataset, --test-suite or --traces (try: sonar run configs/quickstart.yaml)",
                     EXIT_USAGE)
            if flags.get("no_cache") and flags.get("refresh_cache"):
                fail("--no-cache and --refresh-cache exclude each other", EXIT_USAGE)
            cfg = load_config(config, settings_from_flags(flags, model), model)
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
    _summary(result)


def _summary(result) -> None:
    from ..findings.run_findings import problem_counts

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


run_command = make_run_command()
