"""Errors the CLI turns into one-line messages, each with a documented exit code.

Exit codes (docs/cli.md):
  0  the run finished and no gate tripped
  1  the run finished but one or more evaluators failed
  2  bad usage or configuration: unknown key, unknown evaluator id, bad parameter value
  3  bad input data: missing file, malformed JSON line, non-UTF-8 file, bad field
  4  a plugin failed to load, an evaluator's inputs are missing or it fell back on a model, under --strict
  5  --fail-on-problems: a problem at or above the given severity was found
  6  the output folder cannot be written (not writable, or a write failed mid-run; finished
     evaluators are kept for --resume)
  7  --max-cost: the run stopped before its next call would exceed the budget (finished work is kept
     for --resume with a higher budget)
  130 the run was interrupted (Ctrl-C); finished evaluators are kept for --resume
"""

from __future__ import annotations

__all__ = [
    "SonarError",
    "ConfigError",
    "DatasetError",
    "PluginError",
    "ModelMissingError",
    "EXIT_OK",
    "EXIT_EVALUATOR_FAILED",
    "EXIT_USAGE",
    "EXIT_DATA",
    "EXIT_STRICT",
    "EXIT_PROBLEMS",
    "EXIT_INTERRUPTED",
    "EXIT_OUTPUT",
    "OutputError",
    "RunInterrupted",
    "validation_message",
    "EXIT_BUDGET",
    "BudgetExceeded",
]

EXIT_OK = 0
EXIT_EVALUATOR_FAILED = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_STRICT = 4
EXIT_PROBLEMS = 5
EXIT_INTERRUPTED = 130
EXIT_OUTPUT = 6
EXIT_BUDGET = 7


def validation_message(error, noun: str) -> str:
    """One line for a pydantic ``ValidationError``'s first error, naming the setting by ``noun``
    (``key``, ``setting``...): ``unknown <noun> 'x'``, ``missing required <noun> 'x'`` or
    ``<noun> 'x': <pydantic's message>``. Never the input value: a misplaced secret is not echoed."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"]) or "<root>"
    if first["type"] == "extra_forbidden":
        return f"unknown {noun} '{location}'"
    if first["type"] == "missing":
        return f"missing required {noun} '{location}'"
    return f"{noun} '{location}': {first['msg']}"


class SonarError(Exception):
    """Base of every error Sonar reports to users; ``exit_code`` is what the CLI exits with."""

    exit_code = EXIT_USAGE


class ConfigError(SonarError):
    """A configuration key, evaluator id or parameter is wrong."""

    exit_code = EXIT_USAGE


class DatasetError(SonarError):
    """A dataset file is missing or malformed; the message names file, row and field."""

    exit_code = EXIT_DATA


class PluginError(SonarError):
    """A plugin failed to load, or an evaluator cannot run (or ran on a fallback model), in strict mode."""

    exit_code = EXIT_STRICT


class ModelMissingError(SonarError):
    """A model is not available offline; the message names it and how to provide it."""


class RunInterrupted(SonarError):
    """The user interrupted a run; what finished is on disk and ``--resume`` continues it."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self, run_dir) -> None:
        super().__init__(f"run interrupted; finished evaluators are kept: continue with `sonar run --resume {run_dir}`")
        self.run_dir = run_dir


class OutputError(SonarError):
    """The output folder cannot be written; the message names the file or folder (docs/reliability.md)."""

    exit_code = EXIT_OUTPUT

    @classmethod
    def from_os_error(cls, exc: OSError, kept: bool = True) -> "OutputError":
        """One line naming the file an ``OSError`` was about (the artifact, not its temporary copy), and
        why; ``kept``: whether the run folder is kept for ``--resume`` (else nothing was kept)."""
        where = str(exc.filename).removesuffix(".tmp") if exc.filename is not None else "output folder"
        then = ("finished evaluators are kept (continue with --resume once it can be written)" if kept
                else "nothing was kept (run it again once it can be written)")
        return cls(f"{where}: {exc.strerror or type(exc).__name__}; {then}")


class BudgetExceeded(SonarError):
    """The run's next uncached call would have taken its spending past ``--max-cost``: the run stopped
    asking; what finished is kept, and ``--resume`` with a higher budget finishes it (docs/costs.md)."""

    exit_code = EXIT_BUDGET
