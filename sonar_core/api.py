"""The Python API: the same as ``sonar run``, with every setting a typed, documented parameter.

Example (docs/python-api.md)::

    import sonar_core
    result = sonar_core.run(dataset="demo", evaluators=["text_matching", "rouge"], output_dir="reports")
    result.rows("rouge")          # a pandas DataFrame (datatable Frame without pandas)
    result.leaderboard("rouge")
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from . import names
from .config import EvaluatorSpec, PerturbSpec, RunConfig, build_config, load_config
from .execution import PreviousRun, execute_run
from .results import RunResult, open_run
from .traces.spec import TraceInput, trace_setting

__all__ = ["run", "resume", "open_run", "RunResult", "generate"]

#: Where an unknown setting is reported from, as for the CLI's flags.
_SOURCE = "<command line>"


def _settings_checked(func):
    """An unknown keyword is an unknown configuration key, reported in the CLI's words, not a TypeError."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any):
        unknown = [key for key in kwargs if key not in signature.parameters]
        if unknown:
            # The configuration's own validation words it, exactly as for a YAML key or a flag.
            build_config({key: kwargs[key] for key in unknown}, _SOURCE)
        return func(*args, **kwargs)

    return checked


@_settings_checked
def run(
    config: RunConfig | Mapping[str, Any] | str | Path | None = None,
    *,
    name: str | None = None,
    dataset: str | Path | None = None,
    output_dir: str | Path | None = None,
    run_id: str | None = None,
    evaluators: Sequence[str | EvaluatorSpec | Mapping[str, Any]] | None = None,
    thresholds: Mapping[str, float] | None = None,
    strict: bool | None = None,
    fail_on_problems: Literal["HIGH", "MEDIUM", "LOW"] | None = None,
    plugins: Sequence[str] | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    llm_configs: str | Path | None = None,
    default_judge: str | None = None,
    llm_cache: str | Path | None = None,
    no_cache: bool | None = None,
    refresh_cache: bool | None = None,
    csv_formula_escape: bool | None = None,
    columnar_only_above: int | None = None,
    perturb: Sequence[PerturbSpec | Mapping[str, Any]] | None = None,
    base_dir: str | Path | None = None,
    test_suite: str | Path | None = None,
    traces: TraceInput | Mapping[str, Any] | Sequence[str | Path] | str | Path | None = None,
    hosts: Sequence[Mapping[str, Any]] | None = None,
    prices: Mapping[str, Mapping[str, Any]] | None = None,
    calibrate: bool | None = None,
    calibration_items: int | None = None,
    score_untrusted: bool | None = None,
    confidence_level: float | None = None,
    bootstrap_resamples: int | None = None,
    benchmark: str | None = None,
    standards: str | Path | None = None,
    standards_output: str | Path | None = None,
    reference_hosts: Sequence[str] | None = None,
    min_grade: int | None = None,
    executor: Literal["local", "ray"] | None = None,
    ray_address: str | None = None,
    ray_shard_rows: int | None = None,
    epochs: int | None = None,
    epoch_reducer: str | None = None,
    max_cost: float | None = None,
    generate: Mapping[str, Any] | None = None,
    redteam: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> RunResult:
    """Run evaluators over a dataset and write a result directory, as ``sonar run`` does.

    Every setting is the configuration key of the same name (docs/configuration.md, ``sonar run
    --help``); one left as None keeps the value of ``config`` (a YAML file, a dict or a RunConfig),
    else the default. An unknown setting raises :class:`sonar_core.ConfigError` with the CLI's message.

    Args:
        config: a RunConfig, a dict of configuration keys, or the path of a YAML file.
        name: the run's name, the stem of its folder (default ``run``).
        dataset: the LLM dataset to score (a .json/.jsonl/.csv path, or ``demo``).
        output_dir: the folder the run folder is made in (default ``reports``).
        run_id: the run folder's name (default ``<name>-<timestamp>``).
        evaluators: evaluator ids, ``offline`` (every evaluator that needs no network or judge), or
            ``{"id": ..., "name": ..., "params": {...}, "thresholds": {...}, "categories": [...]}``.
        thresholds: metric key -> threshold, for every evaluator.
        strict: an evaluator that cannot run, or a plugin that fails to load, is an error.
        fail_on_problems: exit code 5 when a problem of this severity or higher is found.
        plugins: extra plugin modules to load (``sonar run -p``).
        batch_size: rows per ``evaluate()`` call (default 512).
        device: where models run: ``auto``, ``cpu``, ``cuda``, ``cuda:1``...
        llm_configs: YAML file of LLM (judge) configurations (docs/judges.md).
        default_judge: the judge of every judge evaluator that names none.
        llm_cache: the LLM response cache file.
        no_cache: neither read nor write the LLM response cache.
        refresh_cache: ask the LLMs again instead of using cached answers.
        csv_formula_escape: prefix CSV cells that a spreadsheet would run as formulas with ``'``.
        columnar_only_above: above this many scored rows, row results are Parquet only (docs/result-directory.md).
        perturb: perturbed copies of the test suite's test cases (needs ``test_suite``).
        base_dir: the folder relative paths are resolved from.
        test_suite: test cases without answers, asked of ``hosts`` (docs/hosts.md).
        traces: production spans to score (docs/traces.md): span files or folders, or
            ``{"files": [...], "scope": "span" | "trace" | "session", "span_kinds", "span_names", "attributes",
            "sample_rate", "seed", "model_key"}``.
        hosts: the models under test, ``{key, kind, ...settings}`` each.
        prices: host or judge key -> ``{input_per_1k, output_per_1k}`` USD per 1,000 tokens (docs/costs.md).
        calibrate: measure each judge on its evaluator's calibration set before scoring (default on);
            an untrusted judge's evaluator is not scored and raises one problem about the judge (docs/judges.md).
        calibration_items: calibrate on a balanced subset of at most this many items per set.
        score_untrusted: score an evaluator whose judge fails calibration anyway (its verdicts marked
            untrusted, still not counted); default off: its rows are not scored, nothing is asked.
        confidence_level: the confidence of every interval (default 0.95); the paired tests between
            models call a difference significant below 1 - it (docs/intervals.md).
        bootstrap_resamples: bootstrap replicates per score interval and sign patterns per paired
            permutation test (default 2000).
        benchmark: a benchmark to score and grade: a registered uid or a YAML definition (docs/benchmarks.md).
        standards: the standards file to grade against (default: the benchmark's own).
        standards_output: a calibration run: write the standards file here instead of grading.
        reference_hosts: a calibration run over a dataset: the models that are the reference.
        min_grade: every grade below this (1 Poor .. 5 Excellent) is a HIGH problem.
        executor: ``local`` (default) or ``ray``: score on a Ray cluster (docs/scale-out.md).
        ray_address: the Ray cluster to join (None: start a local instance; ``auto``: the running one).
        ray_shard_rows: rows per Ray shard (default ``batch_size``).
        epochs: ask every host every test case this many times (default 1; needs ``test_suite``);
            a deterministic host is asked once (docs/epochs.md).
        epoch_reducer: how a test case's epochs become one value: ``mean`` (default), ``majority``,
            ``pass_at_k``, ``pass_hat_k``, or ``pass_at_K`` / ``pass_hat_K`` for K of the epochs (``pass_at_2``).
        max_cost: the budget in USD: the run stops asking before a call would take its priced spending past
            it (exit code 7; docs/costs.md).
        generate: generate the test suite from documents first (``{"docs": [...], "n": ..., "output": ...}``;
            docs/generate.md); its ``output`` is the run's ``test_suite``.
        redteam: attack sets x technique chains expanded into the test suite, scored by the red-team
            detectors: ``{suites, techniques, seed, attacker, judge, ...}`` (docs/redteam.md).
        progress: show a progress bar on the terminal.

    Returns:
        RunResult: ``run_dir``, ``status``, ``exit_code``, ``problems``, ``insights``, ... and the
        tables ``rows()``, ``leaderboard(evaluator)``, ``problems()``, ``insights()``.
    """
    given = dict(locals())
    settings = {key: trace_setting(value) if key == "traces" else _plain(value) for key, value in given.items()
                if key not in ("config", "progress") and value is not None}
    if isinstance(config, RunConfig):
        # Through validation again: model_copy(update=...) would accept any setting unchecked.
        cfg = build_config({**config.model_dump(exclude_unset=False), **settings}) if settings else config
    elif isinstance(config, Mapping):
        cfg = build_config({**config, **settings})
    else:
        cfg = load_config(config, settings) if config is not None else build_config(settings, _SOURCE)
    return RunResult.of(execute_run(cfg, progress=progress))


def _plain(value: Any) -> Any:
    """Paths as strings and sequences as lists, as the configuration holds them."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def resume(run_dir: str | Path, *, progress: bool = False, executor: str | None = None,
           ray_address: str | None = None, ray_shard_rows: int | None = None,
           max_cost: float | None = None) -> RunResult:
    """Finish a run that was interrupted: only evaluators without a done marker run again.

    ``executor`` (with ``ray_address``, ``ray_shard_rows``) picks where the rest runs: a run started
    on one executor resumes on either, since where rows are scored changes no result. ``max_cost``:
    the whole run's budget (what the interrupted run spent counts); None keeps the budget it had.
    """
    previous = PreviousRun.open(run_dir)  # run.json is read once, here
    if max_cost is None:
        max_cost = ((previous.record or {}).get("costs") or {}).get("budget", {}).get("max_cost")
    where = {key: value for key, value in (("executor", executor), ("ray_address", ray_address),
                                           ("ray_shard_rows", ray_shard_rows), ("max_cost", max_cost))
             if value is not None}
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
