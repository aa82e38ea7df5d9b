"""``sonar run``'s setting options, made from the run configuration's fields: each field of ``RunConfig``
that carries a :class:`~sonar_core.config.Flag` is one option, its help the field's description, its value
type, choices and repeatability the field's type. Adding a setting is one field (and one row in docs/cli.md).

Another command that takes some of the same settings (``sonar redteam``, ``sonar calibrate``) takes their
options from the same fields with :func:`run_options` and reads them back with :func:`settings_from_flags`
(``only=``): one declaration, one help text, in every command.

The ``traces`` setting is the one whose options are declared elsewhere (:mod:`.traces`: seven flags make
up its keys); :data:`COMPOSITE` names it.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable, Literal, Mapping, Union, get_args, get_origin

import annotated_types
import click
from pydantic.fields import FieldInfo

from ..config import Flag, RunConfig
from .common import parse_hosts, parse_pairs
from .traces import trace_overrides, trace_run_options

__all__ = ["COMPOSITE", "flag_of", "option_name", "run_options", "setting_options", "settings_from_flags"]

#: What click hands a command: one value per option, by the option's destination name.
Flags = Mapping[str, Any]
#: A setting whose options another module declares: (the decorator adding them, flags -> the setting's value).
COMPOSITE: dict[str, tuple[Callable[[Callable], Callable], Callable[[Flags], object]]] = {
    "traces": (trace_run_options, trace_overrides),
}


def flag_of(field: FieldInfo) -> Flag | None:
    """The field's Flag (None: a configuration key only)."""
    return next((item for item in field.metadata if isinstance(item, Flag)), None)


def option_name(name: str, flag: Flag) -> str:
    """The long flag of setting ``name``: ``--output-dir`` for ``output_dir`` unless the Flag names another."""
    return flag.name or "--" + name.replace("_", "-")


def _value_type(annotation: Any) -> Any:
    """``X`` for ``X | None``; else the annotation itself."""
    if get_origin(annotation) in (Union, types.UnionType):
        given = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(given) == 1:
            return given[0]
    return annotation


def _option(name: str, field: FieldInfo, flag: Flag) -> Callable[[Callable], Callable]:
    value_type = _value_type(field.annotation)
    declarations = [option_name(name, flag), *([flag.short] if flag.short else [])]
    # None (or no value for a repeatable option) leaves the configuration file's value, else the default.
    settings: dict[str, object] = {"help": field.description, "default": None}
    if flag.metavar:
        settings["metavar"] = flag.metavar
    if value_type is bool:
        if flag.negatable:
            declarations[0] += "/--no-" + declarations[0].removeprefix("--")
        else:
            settings["is_flag"] = True
    elif get_origin(value_type) in (list, dict):
        settings["multiple"] = True
    elif get_origin(value_type) is Literal:
        settings["type"] = click.Choice(list(get_args(value_type)), case_sensitive=flag.case_sensitive)
    elif flag.file:
        settings["type"] = click.Path(dir_okay=False)
    elif value_type in (int, float):
        settings["type"] = _bounded(value_type, field) if flag.bounded else value_type
    return click.option(*declarations, name, **settings)


def _bounded(value_type: type, field: FieldInfo) -> click.ParamType:
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    return (click.IntRange if value_type is int else click.FloatRange)(low, high)


def setting_options(model: type[RunConfig] = RunConfig) -> Callable[[Callable], Callable]:
    """A decorator: one option per setting of ``model`` that has a Flag (and the composite settings' options),
    in the order of the fields; they reach the command as keyword arguments named as the fields."""

    def decorate(command: Callable) -> Callable:
        for name, field in reversed(list(model.model_fields.items())):
            if name in COMPOSITE:
                command = COMPOSITE[name][0](command)
            elif (flag := flag_of(field)) is not None:
                command = _option(name, field, flag)(command)
        return command

    return decorate


def run_options(*names: str, model: type[RunConfig] = RunConfig,
                long_only: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """A decorator for another command: the options of just the settings ``names`` (flagged fields of ``model``),
    exactly as ``sonar run`` declares them, in the order given; those in ``long_only`` without their short flag
    (the command gives it to an option of its own). A name that is no flagged setting is a programming error
    (ValueError when the command is made)."""
    fields = model.model_fields
    unknown = [name for name in (*names, *long_only) if name not in fields or flag_of(fields[name]) is None]
    if unknown:
        raise ValueError(f"not a setting with a flag: {', '.join(unknown)}")

    def decorate(command: Callable) -> Callable:
        for name in reversed(names):
            flag = flag_of(fields[name])
            assert flag is not None
            if name in long_only:
                flag = dataclasses.replace(flag, short=None)
            command = _option(name, fields[name], flag)(command)
        return command

    return decorate


def settings_from_flags(flags: Flags, model: type[RunConfig] = RunConfig,
                        only: tuple[str, ...] | None = None) -> dict[str, object]:
    """The configuration keys the options set: repeated values as lists, ``KEY=VALUE`` pairs as a mapping,
    YAML mappings parsed; None (or an empty list) where an option was not given. A malformed value exits 2.
    ``only``: the settings a command took with :func:`run_options` (None: every one, as ``sonar run``)."""
    settings: dict[str, object] = {}
    for name, field in model.model_fields.items():
        if only is not None and name not in only:
            continue
        if name in COMPOSITE:
            settings[name] = COMPOSITE[name][1](flags)
            continue
        flag = flag_of(field)
        if flag is None:
            continue
        value, value_type = flags.get(name), _value_type(field.annotation)
        origin = get_origin(value_type)
        element = get_args(value_type)[0] if origin is list else None
        if origin is dict:
            key = (flag.metavar or "KEY=VALUE").partition("=")[0]
            number = get_args(value_type)[1:] in ((float,), (int,))
            value = parse_pairs(value or (), option_name(name, flag), key, number=number)
        elif element is dict or get_origin(element) is dict:
            value = parse_hosts(value or (), option_name(name, flag))
        elif origin is list:
            value = list(value or ())
        settings[name] = value
    return settings
