"""Reading a YAML file that a user wrote: every way it can be bad is one line naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["read_yaml", "MAX_EXPANDED_VALUES", "MAX_EXPANDED_TEXT"]

#: The most values (list items, mapping entries, scalars) a YAML file may stand for once its aliases are
#: expanded: a configuration of a thousand evaluators holds a few tens of thousands.
MAX_EXPANDED_VALUES = 1_000_000
#: The most characters of text it may stand for, expanded (64 million: far past any prompt or dataset path).
MAX_EXPANDED_TEXT = 64_000_000


def _expands_too_far(value: Any) -> bool:
    """Whether ``value`` stands for more than the limits once every alias is expanded.

    A YAML alias is the same object again, so nine lists of nine aliases nine levels deep load in
    microseconds as a few kilobytes, yet stand for 9**9 (387 million) values: anything that walks, copies,
    prints or serialises them (a parameter's check, its error message, run.json) runs out of memory. The
    walk here counts what they stand for and stops as soon as a limit is passed.
    """
    values = text = 0
    stack = [value]
    while stack:
        item = stack.pop()
        values += 1
        if values > MAX_EXPANDED_VALUES:
            return True
        if isinstance(item, str):
            text += len(item)
            if text > MAX_EXPANDED_TEXT:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def read_yaml(path: Path, what: str) -> Any:
    """The parsed content of ``path`` (None for an empty file).

    ``what`` names the file in the error for non-UTF-8 text ("configuration file" gives
    "PATH: configuration file is not UTF-8"). Raises ConfigError, one line, for invalid YAML (with
    its line), YAML nested too deeply (PyYAML recurses once per level: '[' * 1000 raised
    RecursionError, found by bench/fuzz.py), aliases that expand past :data:`MAX_EXPANDED_VALUES` values
    or :data:`MAX_EXPANDED_TEXT` characters (an "alias bomb": a parameter value of nine nested aliases
    took ~90 s to end in MemoryError) and text that is not UTF-8.
    """
    import yaml  # only when there is a file: most runs read none

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} is not UTF-8") from None
    if _expands_too_far(loaded):
        raise ConfigError(f"{path}: {what} stands for more than {MAX_EXPANDED_VALUES:,} values or "
                          f"{MAX_EXPANDED_TEXT:,} characters once its aliases are expanded; refusing it")
    return loaded
