"""The Python API: the same as ``sonar run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import names
from .config import RunConfig, build_config, load_config
from .execution import PreviousRun, RunResult, execute_run

__all__ = ["run", "resume"]


def run(config: RunConfig | dict[str, Any] | str | Path | None = None, *, progress: bool = False,
        **overrides: Any) -> RunResult:
    """Run evaluators over a dataset and write a result directory.

    Args:
        config: a RunConfig, a dict of configuration keys, or the path of a YAML file.
        progress: show a progress bar on the terminal.
        **overrides: configuration keys that replace the file's (``dataset=...``,
            ``evaluators=[...]``, ``output_dir=...``, ``thresholds={...}``, ...).

    Returns:
        RunResult with the run folder, status, exit code, problems and insights.

    Example::

        import sonar_core
        result = sonar_core.run(dataset="demo", evaluators=["text_matching"], output_dir="reports")
        print(result.run_dir, result.status)
    """
    if isinstance(config, RunConfig):
        # Through validation again: model_copy(update=...) would accept any override unchecked.
        cfg = build_config({**config.model_dump(), **overrides}) if overrides else config
    elif isinstance(config, dict):
        cfg = build_config({**config, **overrides})
    else:
        cfg = load_config(config, overrides) if config is not None else build_config(overrides)
    return execute_run(cfg, progress=progress)


def resume(run_dir: str | Path, *, progress: bool = False) -> RunResult:
    """Finish a run that was interrupted: only evaluators without a done marker run again."""
    previous = PreviousRun.open(run_dir)  # run.json is read once, here
    config = build_config(previous.parameters(), str(previous.run_dir / names.RUN_JSON))
    return execute_run(config, previous=previous, progress=progress)
