"""The Python API: the same as ``sonar run``, with every setting a typed, documented parameter.

Example (docs/python-api.md)::

    import sonar_core
    result = sonar_core.run(dataset="demo", evaluators=["text_matching", "rouge"], output_dir="reports")
    result.rows("rouge")          # a pandas DataFrame (datatable Frame without pandas)
    result.leaderboard("rouge")
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from . import names
from .config import EXECUTION_KEYS, RunConfig, build_config, load_config, nearest_setting
from .errors import ConfigError
from .execution import PreviousRun, execute_run
from .results import RunResult, open_run
from .traces.spec import trace_setting

__all__ = ["run", "resume", "open_run", "RunResult", "generate"]

#: Where an unknown setting is reported from, as for the CLI's flags.
_SOURCE = "<command line>"


def run(config: RunConfig | Mapping[str, object] | str | Path | None = None, *, progress: bool = False,
        **settings: object) -> RunResult:
    """Run evaluators over a dataset and write a result directory, as ``sonar run`` does.

    Every setting is the configuration key of the same name, a field of ``RunConfig`` (docs/cli.md, ``sonar run
    --help``); one left as None keeps the value of ``config`` (a YAML file, a dict or a RunConfig), else the
    default. A setting that is not a field of the configuration (of ``type(config)`` for a RunConfig, whose
    subclass may add settings) raises :class:`sonar_core.ConfigError` naming it, and the nearest setting when
    one is close. A path may be a ``Path``, a list a tuple; ``traces`` also takes span files or folders.

    Returns:
        RunResult: ``run_dir``, ``status``, ``exit_code``, ``problems``, ``insights``, ... and the
        tables ``rows()``, ``leaderboard(evaluator)``, ``problems()``, ``insights()``.
    """
    model = type(config) if isinstance(config, RunConfig) else RunConfig
    for key in settings:
        if key not in model.model_fields:
            raise ConfigError(f"{_SOURCE}: unknown configuration key '{key}'{nearest_setting(key, model)}")
    given = {key: trace_setting(value) if key == "traces" else _plain(value) for key, value in settings.items()
             if value is not None}
    if isinstance(config, RunConfig):
        # Through validation again: model_copy(update=...) would accept any setting unchecked.
        cfg = build_config({**config.model_dump(exclude_unset=False), **given}, model=model) if given else config
    elif isinstance(config, Mapping):
        cfg = build_config({**config, **given})
    else:
        cfg = load_config(config, given) if config is not None else build_config(given, _SOURCE)
    return RunResult.of(execute_run(cfg, progress=progress))


def _documented(func: Callable[..., RunResult], model: type[RunConfig]) -> None:
    """Give ``func`` (``run``) the signature and the ``Args`` of ``model``'s fields: ``help(sonar_core.run)`` and
    editors show every setting, each with the description it has on the command line."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter("config", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                    annotation=RunConfig | Mapping[str, object] | str | Path | None)]
    parameters += [inspect.Parameter(name, keyword, default=None, annotation=Optional[field.annotation])
                   for name, field in model.model_fields.items()]
    parameters.append(inspect.Parameter("progress", keyword, default=False, annotation=bool))
    func.__signature__ = inspect.Signature(parameters, return_annotation=RunResult)  # type: ignore[attr-defined]
    lines = ["config: a RunConfig, a dict of configuration keys, or the path of a YAML file."]
    lines += [f"{name}: {field.description or ''}" for name, field in model.model_fields.items()]
    lines.append("progress: show a progress bar on the terminal.")
    args = "\n".join(textwrap.fill(line, 112, initial_indent=" " * 8, subsequent_indent=" " * 12) for line in lines)
    head, returns = (func.__doc__ or "").split("\n    Returns:")
    func.__doc__ = f"{head.rstrip()}\n\n    Args:\n{args}\n\n    Returns:{returns}"


_documented(run, RunConfig)


def _plain(value: Any) -> Any:
    """Paths as strings and sequences as lists, as the configuration holds them."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def resume(run_dir: str | Path, *, progress: bool = False, **where: object) -> RunResult:
    """Finish a run that was interrupted: only evaluators without a done marker run again.

    ``where`` takes the execution settings (``EXECUTION_KEYS``: ``executor``, ``ray_address``,
    ``ray_shard_rows``, ``ray_model_actors``, ``max_cost``), which pick where the rest runs: a run started on
    one executor resumes on either, since where rows are scored changes no result. ``max_cost``: the whole
    run's budget (what the interrupted run spent counts); None keeps the budget it had. Any other setting
    raises :class:`sonar_core.ConfigError`: a resumed run computes what the run it finishes computed.
    """
    unknown = sorted(set(where) - set(EXECUTION_KEYS))
    if unknown:
        raise ConfigError(f"{_SOURCE}: resume takes only execution settings ({', '.join(EXECUTION_KEYS)}), "
                          f"not {unknown[0]!r}")
    previous = PreviousRun.open(run_dir)  # run.json is read once, here
    if where.get("max_cost") is None:
        where["max_cost"] = ((previous.record or {}).get("costs") or {}).get("budget", {}).get("max_cost")
    where = {key: _plain(value) for key, value in where.items() if value is not None}
    config = build_config({**previous.parameters(), **where}, str(previous.run_dir / names.RUN_JSON))
    return RunResult.of(execute_run(config, previous=previous, progress=progress))


def generate(docs: Sequence[str | Path] | str | Path, *, n: int = 20, output: str | Path = "generated/suite.jsonl",
             dry_run: bool = False, progress: bool = False, **settings: Any):
    """Write a test suite from documents, every item's quality measured, as ``sonar generate`` does.

    ``settings`` are the keys of a run configuration's ``generate:`` section (docs/generate.md: ``judge``,
    ``quality_judge``, ``seed``, ``spread``, ``types``, ``personas``, ``styles``, ``min_quality``,
    ``keep_low_quality``, ``calibrate``, ``llm_configs``, ``llm_cache``, ``prices``, ``max_cost``...); an
    unknown one raises :class:`sonar_core.ConfigError`. Returns a ``GenerationResult``: ``suite`` (the
    path), ``exit_code``, ``message``, ``findings`` (the report's content), ``files`` and, for a dry
    run, ``estimate``. Raises the CLI's errors (DatasetError, ConfigError, BudgetExceeded...).
    """
    from pydantic import ValidationError

    from .errors import ConfigError, validation_message
    from .generate_config import GenerateSpec
    from .generation.run import run_generation

    paths = [docs] if isinstance(docs, (str, Path)) else list(docs)
    try:
        spec = GenerateSpec.model_validate({"docs": [str(p) for p in paths], "n": n, "output": str(output),
                                            **{k: _plain(v) for k, v in settings.items()}})
    except ValidationError as exc:
        raise ConfigError(f"{_SOURCE}: {validation_message(exc, 'setting')}") from None
    say = (lambda text: print(f"generate: {text}", flush=True)) if progress else None
    return run_generation(spec, dry_run=dry_run, progress=say)
