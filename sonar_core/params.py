"""Evaluator parameters: their declaration (:class:`Param`), coercion and validation.

An evaluator declares its parameters as :class:`Param` s; the core coerces what a configuration
gives to the declared type, checks bounds, choices and any extra check, and fails with a
:class:`ParameterError` naming the parameter and the evaluator. :data:`COMMON_PARAMETERS` are the
ones every evaluator has. Part of the contract (re-exported by :mod:`sonar_core.contract`).
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from typing import Any, Callable, Union

from .jsontypes import JsonValue

__all__ = ["COMMON_PARAMETERS", "Param", "ParameterError", "ParamValue", "ParamValues", "quoted"]

#: One parameter's value once :meth:`Param.coerce` checked it: the declared type's (None: no default).
ParamValue = Union[bool, int, float, str, list[JsonValue], None]
#: An evaluator's (or a perturbator's) validated parameters by name: every declared one is present.
ParamValues = dict[str, ParamValue]


class ParameterError(ValueError):
    """A parameter value that fails validation; the message names the parameter."""


#: The most characters of a value an error message quotes.
QUOTED = 200
_REPR = reprlib.Repr()  # (keyword arguments only from Python 3.12)
_REPR.maxlevel, _REPR.maxtuple, _REPR.maxlist, _REPR.maxdict, _REPR.maxset = 3, 6, 6, 6, 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = QUOTED


def quoted(value: Any) -> str:
    """``repr(value)`` for an error message: at most :data:`QUOTED` characters, and never more of a
    nested value than a few items per level (a YAML alias can make a value of a few kilobytes stand
    for hundreds of millions of items, whose whole repr would never end)."""
    text = _REPR.repr(value)
    return text if len(text) <= QUOTED else text[:QUOTED - 1] + "…"


@dataclass(frozen=True)
class Param:
    """A declared evaluator parameter with type, default and validation."""

    name: str
    type: type
    default: Any
    description: str
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] = ()
    #: Extra check: returns an error message, or None when the value is fine.
    check: Callable[[Any], str | None] | None = None

    def coerce(self, value: Any, evaluator_id: str = "") -> Any:
        """Return ``value`` converted to the declared type, or raise ParameterError."""
        where = f"parameter '{self.name}' of evaluator '{evaluator_id}'" if evaluator_id else f"parameter '{self.name}'"
        given = value  # messages echo what the user wrote, not a half-converted value
        try:
            if self.type is bool:
                if isinstance(value, str):
                    lowered = value.strip().lower()
                    if lowered not in ("true", "false", "1", "0", "yes", "no"):
                        raise ValueError(value)
                    value = lowered in ("true", "1", "yes")
                elif not isinstance(value, bool):
                    raise ValueError(value)
            elif self.type is float:
                if isinstance(value, bool):
                    raise ValueError(value)
                value = float(value)
                if not math.isfinite(value):  # NaN and infinities (docs/reliability.md)
                    raise ValueError(value)
            elif self.type is int:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError(value)
                value = int(value)
            elif self.type is str:
                if not isinstance(value, str):
                    raise ValueError(value)
            elif self.type is list:
                if isinstance(value, str):
                    value = [v.strip() for v in value.split(",") if v.strip()]
                elif not isinstance(value, (list, tuple)):
                    raise ValueError(value)
                value = list(value)
        except ParameterError:
            raise
        except (TypeError, ValueError, OverflowError):  # an integer past a float's range (found by bench/fuzz.py)
            raise ParameterError(f"{where} must be of type {self.type.__name__}, got {quoted(given)}") from None
        if self.min is not None and value < self.min:
            raise ParameterError(f"{where} must be >= {self.min}, got {quoted(value)}")
        if self.max is not None and value > self.max:
            raise ParameterError(f"{where} must be <= {self.max}, got {quoted(value)}")
        if self.choices and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ParameterError(f"{where} must be one of {allowed}, got {quoted(value)}")
        if self.check is not None:
            message = self.check(value)
            if message:
                raise ParameterError(f"{where}: {message}")
        return value


#: Parameters every evaluator has; the core adds them to each declaration.
COMMON_PARAMETERS: tuple[Param, ...] = (
    Param(
        "metric_threshold",
        float,
        None,
        "Threshold of the primary metric: a model whose mean is on the wrong side of it is "
        "reported as a problem. Empty means the metric's default threshold.",
    ),
    Param(
        "save_llm_result",
        bool,
        True,
        "Save the evaluated LLM dataset with every metric (llm-eval-results JSON, CSV and .jay).",
    ),
)
