"""The Python API: the same as ``sonar run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import names
from .config import RunConfig, build_config, load_config
from .errors import ConfigError
from .runner import RunResult, execute_run

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
    run_dir = Path(run_dir)
    record = run_dir / names.RUN_JSON
    if not record.is_file():
        raise ConfigError(f"{run_dir}: not a Sonar run directory (no {names.RUN_JSON})")
    try:
        parameters = json.loads(record.read_text(encoding="utf-8"))["interpretation_parameters"]
    except (json.JSONDecodeError, KeyError):
        raise ConfigError(f"{record}: unreadable run record; start a new run instead") from None
    return execute_run(build_config(parameters, str(record)), resume_dir=run_dir, progress=progress)
