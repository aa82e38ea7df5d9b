"""A run configuration's ``generate:`` section: the suite is generated, then asked and scored.

``sonar run`` (and ``sonar_core.run``) call :func:`generate_for_run` before the test suite is read:
the section's settings are a :class:`~sonar_core.generate_config.GenerateSpec`, whose unset keys take
the run's own (``llm_configs``, ``llm_cache``, ``no_cache``, ``default_judge``, ``prices``,
``max_cost``, ``device``); its ``output`` is the run's ``test_suite``. A second run generates nothing
anew (every answer is cached) and writes the same suite, so a resumed run finds its suite unchanged.
"""

from __future__ import annotations

from ..errors import ConfigError, EXIT_OK, SonarError

__all__ = ["generate_for_run"]


def generate_for_run(config, *, dry: bool = False, progress=None) -> None:
    """Generate ``config.test_suite`` from ``config.generate`` (nothing without a ``generate:`` section).

    Raises:
        SonarError: the generation's own errors; ConfigError when it kept no item (nothing to ask).
    """
    spec = getattr(config, "generate", None)
    if spec is None:
        return
    from .run import run_generation

    inherited = {"base_dir": config.base_dir, "output": config.test_suite}
    for key, value in (("llm_configs", config.llm_configs), ("llm_cache", config.llm_cache),
                       ("judge", config.default_judge), ("max_cost", config.max_cost), ("device", config.device)):
        if getattr(spec, key) is None or (key == "device" and spec.device == "auto"):
            inherited[key] = value
    if config.no_cache:
        inherited["no_cache"] = True
    if not spec.prices and config.prices:
        inherited["prices"] = {k: dict(v) for k, v in config.prices.items()}
    spec = spec.model_copy(update={k: v for k, v in inherited.items() if v is not None})
    result = run_generation(spec, dry_run=dry, progress=progress)
    if dry:
        if not config.resolve_path(config.test_suite).is_file():
            raise ConfigError(f"{config.test_suite}: not generated yet, so a dry run cannot count the hosts' calls; "
                              f"`sonar generate --dry-run` counts the generation's")
        return
    if result.exit_code != EXIT_OK:
        error = SonarError(f"generate: {result.message}")
        error.exit_code = result.exit_code
        raise error
