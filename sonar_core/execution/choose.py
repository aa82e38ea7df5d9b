"""The executor a run's configuration asks for (``executor: local | ray``)."""

from __future__ import annotations

from typing import Any

from ..config import RunConfig
from ..errors import ConfigError
from .executors import LOCAL

__all__ = ["make_executor", "RAY_MISSING"]

#: The one-line error of ``executor: ray`` on an install without Ray.
RAY_MISSING = "executor 'ray' needs Ray, which is not installed: pip install 'sonar-eval[ray]'"


def make_executor(config: RunConfig) -> Any:
    """The executor ``config`` asks for; ConfigError (one line, naming the extra) when Ray is missing."""
    if config.executor == "local":
        if config.ray_address is not None:
            raise ConfigError("ray_address needs executor: ray (--executor ray)")
        return LOCAL
    try:
        import ray  # noqa: F401 - only to know whether the extra is installed
    except ImportError:
        raise ConfigError(RAY_MISSING) from None
    from .ray_executor import RayExecutor

    return RayExecutor(config)
