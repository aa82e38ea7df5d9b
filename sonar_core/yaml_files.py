"""Reading a YAML file that a user wrote: every way it can be bad is one line naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["read_yaml"]


def read_yaml(path: Path, what: str) -> Any:
    """The parsed content of ``path`` (None for an empty file).

    ``what`` names the file in the error for non-UTF-8 text ("configuration file" gives
    "PATH: configuration file is not UTF-8"). Raises ConfigError, one line, for invalid YAML (with
    its line), YAML nested too deeply (PyYAML recurses once per level: '[' * 1000 raised
    RecursionError, found by bench/fuzz.py) and text that is not UTF-8.
    """
    import yaml  # only when there is a file: most runs read none

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} is not UTF-8") from None
