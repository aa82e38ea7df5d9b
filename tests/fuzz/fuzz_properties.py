"""The promise every fuzz case is held to (docs/reliability.md), and an in-process ``sonar`` to hold it to.

For any input: an exit code from the documented set; at most one ``error:`` line on stderr and no
traceback (an exit for bad input is that one line and nothing else); every file written inside the
output folder; every JSON artifact strict JSON (no NaN or Infinity tokens); every row an evaluator
finished present in its llm-eval-results.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

#: docs/cli.md's exit codes.
EXIT_CODES = frozenset({0, 1, 2, 3, 4, 5, 6, 130})
#: Exit codes for an input refused before the run: the one error line is all of stderr.
REFUSALS = frozenset({2, 3, 4, 6})


class PromiseBroken(AssertionError):
    """A fuzz case that breaks the promise; the message says which part."""


@dataclass
class Outcome:
    exit_code: int
    stderr: str
    exception: BaseException | None
    #: The files of the case's folder before the run (its inputs).
    before: set[Path]


def sonar(args: list[str], cwd: Path) -> Outcome:
    """``sonar ARGS`` in this process, in ``cwd`` (relative paths in flags land there)."""
    before = files_under(cwd)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        os.chdir(here)
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Outcome(result.exit_code, result.stderr, exception, before)


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; False for a path no folder can have (too long, a link loop, a NUL)."""
    try:
        return path.is_dir()
    except (OSError, ValueError, RuntimeError):
        return False


def _strict(text: str, where: Path) -> None:
    def refuse(token: str):
        raise PromiseBroken(f"{where}: non-standard JSON token {token}")

    json.loads(text, parse_constant=refuse)


def check(outcome: Outcome, sandbox: Path, output: Path) -> None:
    """Raise :class:`PromiseBroken` unless ``outcome`` keeps the promise. ``sandbox``: the case's folder
    (inputs and output); ``output``: the output folder."""
    if outcome.exception is not None:
        import traceback

        frames = traceback.extract_tb(outcome.exception.__traceback__)
        where = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(frames[-4:]))
        raise PromiseBroken(f"uncaught {type(outcome.exception).__name__} at {where}: "
                            f"{str(outcome.exception)[:300]}")
    if outcome.exit_code not in EXIT_CODES:
        raise PromiseBroken(f"exit code {outcome.exit_code} is not documented")
    lines = outcome.stderr.splitlines()
    if "Traceback" in outcome.stderr:
        tail = outcome.stderr[outcome.stderr.index("Traceback"):].splitlines()
        raise PromiseBroken(f"a traceback on stderr: {' | '.join(tail[-6:])}"[:800])
    errors = [line for line in lines if line.startswith("error: ")]
    if len(errors) > 1:
        raise PromiseBroken(f"{len(errors)} error lines: {errors[:3]}")
    if outcome.exit_code in REFUSALS and len(lines) != 1:
        raise PromiseBroken(f"exit {outcome.exit_code} with {len(lines)} lines on stderr: {lines[:3]}")
    try:
        output = output.resolve()
    except (OSError, ValueError, RuntimeError):  # a path no folder can have: nothing may have been written
        output = sandbox / "\x01no output folder"
    for path in files_under(sandbox) - outcome.before:
        if not path.resolve().is_relative_to(output) and not path.is_relative_to(output):
            raise PromiseBroken(f"{path} written outside the output folder {output}")
    for path in files_under(output) if _is_dir(output) else ():
        if path.suffix == ".json" or path.name.endswith(".meta"):
            _strict(path.read_text(encoding="utf-8"), path)
        elif path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").split("\n")[:-1]:  # JSON Lines end at "\n" only
                _strict(line, path)
    for journal in output.rglob(names.JOURNAL) if _is_dir(output) else ():
        _finished_rows_present(journal.parent)


def _finished_rows_present(run_dir: Path) -> None:
    events = [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").split("\n")[:-1]]
    scored = {e["evaluator"]: e["rows"] for e in events if e["message"] == "evaluator scored"}
    for event in events:
        if event["message"] != "wrote artifacts":
            continue
        folder = run_dir / event["folder"]
        results = folder / names.EVAL_RESULTS / names.mime_dir(names.MIME_JSON) / f"{names.EXPLANATION_STEM}.json"
        if not (folder / names.DONE_MARKER).is_file():
            raise PromiseBroken(f"{folder.name}: artifacts written but no done marker")
        if results.is_file():
            rows = json.loads(results.read_text(encoding="utf-8"))["results"]
            if len(rows) < scored.get(event["evaluator"], 0):
                raise PromiseBroken(f"{folder.name}: {len(rows)} rows in its results, "
                                    f"{scored[event['evaluator']]} scored")
