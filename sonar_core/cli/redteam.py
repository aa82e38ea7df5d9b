"""``sonar redteam``: attack the models under test with an attack suite and print what the detectors found
(docs/redteam.md).

The command builds a run configuration whose ``redteam:`` section holds the flags (over a CONFIG file's
own section), runs it as any run (``sonar run`` does the same with a ``redteam:`` section), then reads the
run's outcomes back and prints the red-team findings: attack success rates with exact intervals, hit@k,
over-refusal, the hazard x technique table, problems and insights. ``--list`` lists the attack sets and
techniques; ``--detector-figures`` measures each detector on its labelled answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Mapping

import click

from .. import names
from ..listing_shapes import DetectorFigure, RedteamListing
from .common import fail, one_line, out, plugin_manager
from .settings import run_options, settings_from_flags
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, SonarError

__all__ = ["redteam_command", "redteam_listing", "detector_figures", "RUN_SETTINGS"]

#: The run settings ``sonar redteam`` takes as ``sonar run`` does: their options are made from RunConfig's fields.
RUN_SETTINGS = ("hosts", "epochs", "output_dir", "run_id", "llm_configs", "llm_cache", "no_cache", "refresh_cache",
                "max_cost", "executor", "plugins", "fail_on_problems")


def redteam_listing(manager) -> RedteamListing:
    """The registered attack sets (name, version, attacks per category, plugin) and techniques (name, kind)."""
    from ..listings import LISTING_SCHEMA_VERSION
    from ..redteam import attack_sets, techniques

    sets, kinds = manager.registry("register_attack_sets"), manager.registry("register_techniques")
    return {"schema_version": LISTING_SCHEMA_VERSION,
            "attack_sets": [{"name": name, "version": s.version, "attacks": len(s.attacks),
                             "categories": {c: sum(1 for a in s.attacks if a.category == c)
                                            for c in dict.fromkeys(a.category for a in s.attacks)},
                             "plugin": sets.owner(name), "path": s.path} for name, s in attack_sets(manager).items()],
            "techniques": [{"name": "direct", "kind": "none", "plugin": None,
                            "description": "The base attack sent as it is."}]
                          + [{"name": name, "kind": cls.kind, "plugin": kinds.owner(name), "description": cls.description}
                             for name, cls in techniques(manager).items()]}


def detector_figures(manager) -> list[DetectorFigure]:
    """Each installed evaluator with a labelled set (``labelled/<id>.jsonl``): its precision and recall."""
    from ..artifacts.redteam import quality_record
    from ..findings.redteam import detector_quality
    from ..redteam.labelled import label_detector, labelled_set_path, load_labelled_set

    figures: list[DetectorFigure] = []
    for evaluator_id, cls in manager.evaluators.items():
        path = labelled_set_path(cls)
        if path is None:
            continue
        labelled = load_labelled_set(path)
        quality = detector_quality(*label_detector(cls, labelled))
        figures.append({"detector": evaluator_id, "positive": labelled.positive, "items": quality.items,
                        "set_path": str(path), "set_sha256": labelled.sha256, **quality_record(quality),
                        "text": quality.text()})
    return figures


def _section(config: Path | None, flags: Mapping[str, object]) -> dict[str, object]:
    """The ``redteam:`` section: the CONFIG file's own, with the flags given over it."""
    from ..yaml_files import read_yaml

    section: dict[str, object] = {}
    if config is not None and config.is_file():
        loaded = read_yaml(config, "configuration file")
        if isinstance(loaded, dict) and isinstance(loaded.get("redteam"), dict):
            section = dict(loaded["redteam"])
    section.update({k: v for k, v in flags.items() if v not in (None, (), [])})
    return section


@click.command("redteam")
@click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--suite", "suites", multiple=True, metavar="NAME|FILE",
              help="An attack set (sonar redteam --list) or attack file, .jsonl or .csv (repeatable; default sonar-core).")
@click.option("--techniques", "techniques", multiple=True, metavar="CHAINS",
              help="Technique chains, comma-separated: direct, roleplay, base64, roleplay+base64, crescendo... "
                   "(repeatable; default direct).")
@click.option("--attacker", metavar="KEY", help="LLM configuration key of the attacker that plays the user in "
                                                 "multi-turn techniques (crescendo, iterative).")
@click.option("--judge", "harm_judge", metavar="KEY", help="LLM configuration key of a judge: harmful requests are then "
                                                            "decided by harmful_compliance instead of the refusal classifier.")
@click.option("--seed", type=int, default=None, help="Seed of the expansion (technique choices, canaries, markers).")
@click.option("--max-turns", type=int, default=None, metavar="N", help="Most host turns of a multi-turn attack (default 6).")
@click.option("--category", "categories", multiple=True, help="Only attacks of this category (repeatable).")
@click.option("--hazard", "hazards", multiple=True, help="Only attacks of this hazard (repeatable).")
@click.option("--system-delivery", type=click.Choice(["system_turn", "prompt"]), default=None,
              help="A planted system prompt as a system turn (chat hosts; default) or written before the prompt.")
@run_options(*RUN_SETTINGS)
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Finish an interrupted red-team run folder.")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on a terminal).")
@click.option("--standards", metavar="FILE", help="A standards file (sonar calibrate): each hazard graded on the attacks "
                                                 "resisted, against its reference score.")
@click.option("--dry-run", is_flag=True, help="Ask nothing: print the calls and cost the run would need.")
@click.option("--list", "listing", is_flag=True, help="List the attack sets and techniques, and run nothing.")
@click.option("--detector-figures", "figures", is_flag=True, help="Measure each detector on its labelled answers (precision, "
                                                       "recall) and run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the findings, the listing, the figures or the estimate.")
def redteam_command(config, suites, hosts, techniques, epochs, attacker, harm_judge, seed, max_turns, categories,
                    hazards, system_delivery, output_dir, run_id, llm_configs, llm_cache, no_cache, refresh_cache,
                    max_cost, executor, plugins, resume_dir, progress, standards, fail_on_problems, dry_run, listing,
                    figures, as_json) -> None:
    """Attack models under test with a red-team suite; print success rates, hit@k and over-refusal.

    CONFIG is a run configuration with hosts (and optionally a redteam: section); flags override it.
    With --epochs N each attack is asked N times and the findings add hit@N (one success in N samples
    counts). An attack success rate whose interval lies above its threshold is a problem (--fail-on-problems).
    Exit codes as sonar run's: 0 ok, 1 an evaluator failed, 2 bad usage or configuration, 3 bad attack file,
    5 a problem at or above --fail-on-problems, 7 --max-cost reached, 130 interrupted.
    """
    from ..execution import execute_run

    show = sys.stderr.isatty() if progress is None else progress
    try:
        if listing or figures:
            manager = plugin_manager(plugins)
            data = redteam_listing(manager) if listing else {"detectors": detector_figures(manager)}
            return _print_listing(data, listing, as_json)
        if resume_dir is not None:
            from ..api import resume

            result = resume(resume_dir, progress=show, executor=executor, max_cost=max_cost)
        else:
            from ..config import load_config

            if config is None and not hosts:
                fail("give a CONFIG file with hosts, or --host (try: sonar redteam configs/redteam_demo.yaml)", EXIT_USAGE)
            flags = {"suites": list(suites), "techniques": list(techniques), "attacker": attacker, "judge": harm_judge,
                     "seed": seed, "max_turns": max_turns, "categories": list(categories), "hazards": list(hazards),
                     "system_delivery": system_delivery, "standards": standards}
            given = {"hosts": hosts, "epochs": epochs, "output_dir": output_dir, "run_id": run_id,
                     "llm_configs": llm_configs, "llm_cache": llm_cache, "no_cache": no_cache,
                     "refresh_cache": refresh_cache, "max_cost": max_cost, "executor": executor, "plugins": plugins,
                     "fail_on_problems": fail_on_problems}
            overrides = {"redteam": _section(config, flags), **settings_from_flags(given, only=RUN_SETTINGS),
                         "name": None if config else "redteam"}
            cfg = load_config(config, overrides)
            if dry_run:
                from .costs import print_estimate

                return print_estimate(cfg, as_json)
            result = execute_run(cfg, progress=show)
        _report(result, as_json)
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)


def _print_listing(data: RedteamListing | dict[str, list[DetectorFigure]], listing: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif listing:
        for entry in data["attack_sets"]:
            counts = ", ".join(f"{c} {n}" for c, n in entry["categories"].items())
            out.print(f"attack set {entry['name']} v{entry['version']} ({entry['plugin']}): {entry['attacks']} attacks: "
                      f"{counts}", markup=False, highlight=False)
        for entry in data["techniques"]:
            out.print(f"technique {entry['name']} ({entry['kind']}): {entry['description']}", markup=False,
                      highlight=False)
    else:
        for entry in data["detectors"]:
            out.print(f"{entry['detector']} on {entry['items']} labelled answers: {entry['text']}", markup=False,
                      highlight=False)


def _report(result, as_json: bool) -> None:
    """The run's status lines (stderr) and its red-team findings (stdout: run.json's ``redteam`` section, or
    the run's ``redteam/summary.txt``), then exit with the run's code."""
    from ..artifacts.redteam_report import REDTEAM_DIR, REPORT, SUMMARY

    say = lambda text: click.echo(text, err=True)  # noqa: E731
    say(f"Run {result.status}: {result.run_dir}")
    record = json.loads((Path(result.run_dir) / names.RUN_JSON).read_text(encoding="utf-8"))
    if record.get("redteam") is not None:
        if as_json:
            click.echo(json.dumps(record["redteam"], indent=2, ensure_ascii=False))
        else:
            click.echo((Path(result.run_dir) / REDTEAM_DIR / SUMMARY).read_text(encoding="utf-8"), nl=False)
        say(f"  open {Path(result.run_dir) / REDTEAM_DIR / REPORT}")
    say(f"  open {Path(result.run_dir) / 'index.html'}")
    if result.exit_code != EXIT_OK:
        click.echo(f"error: {one_line(result.message)}", err=True)
    sys.exit(result.exit_code)
