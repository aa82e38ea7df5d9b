"""What every ``sonar`` command shares: the console, the one-line error, option parsers, the plugin manager.

Every error a user can cause is one line on stderr, ``error: <what is wrong>``, and an exit code
from :mod:`sonar_core.errors` (documented in docs/cli.md).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time

import click

from ..errors import EXIT_INTERRUPTED, EXIT_USAGE
from ..text_clean import clean_text
from ..terminal import LazyConsole, terminal_width

__all__ = ["out", "fail", "exit_now", "one_line", "parse_pairs", "parse_params", "parse_hosts", "plugin_manager",
           "JSON_OPTION", "OneLineGroup"]

# Off a terminal (pipes, CI logs, tests) rich would wrap tables at 80 columns; give it room.
out = LazyConsole(highlight=False, width=terminal_width())


def one_line(message: str) -> str:
    """``message`` as one printable line: a character that is not printable (a line break, a control
    character, a lone surrogate that the terminal cannot encode) is written as its escape. Messages quote
    what users wrote, and a flag's value can hold anything (found by the fuzz suite)."""
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in message)


def fail(message: str, code: int) -> None:
    click.echo(f"error: {one_line(message)}", err=True)
    if code == EXIT_INTERRUPTED:
        exit_now(code)
    sys.exit(code)


#: Seconds an interrupted command gives its other threads to end before it exits without them.
_GRACE = 2.0


def exit_now(code: int) -> None:
    """Exit with ``code`` (Ctrl-C: 130) even while worker threads are still in a call or waiting.

    The run has already recorded what it had (run.json, the journal, the answers) and closed its
    services; a thread still in a model call would make the interpreter wait for it at exit. They
    get ``_GRACE`` seconds to end, then the process ends without them (``os._exit``).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    deadline = time.monotonic() + _GRACE
    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    try:
        for thread in others:
            thread.join(max(0.0, deadline - time.monotonic()))
    except KeyboardInterrupt:  # Ctrl-C again: no more grace
        os._exit(code)
    if any(thread.is_alive() for thread in others):
        os._exit(code)
    sys.exit(code)


def parse_pairs(values: tuple[str, ...], option: str = "--threshold", key: str = "METRIC", *,
                number: bool = True) -> dict[str, float | str]:
    """A repeatable ``KEY=VALUE`` option's values as a mapping; with ``number``, each value a finite number."""
    pairs: dict[str, float | str] = {}
    expected = f"{option} expects {key}={'NUMBER' if number else 'VALUE'}, got "
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"{expected}'{item}'", EXIT_USAGE)
        if not number:
            pairs[name.strip()] = value
            continue
        try:
            parsed = float(value)
        except ValueError:
            fail(f"{expected}'{item}'", EXIT_USAGE)
        if not math.isfinite(parsed):
            fail(f"{option} {name.strip()}: expected a finite number, got '{value}'", EXIT_USAGE)
        pairs[name.strip()] = parsed
    return pairs


def parse_params(values: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """``--param EVALUATOR.PARAMETER=VALUE`` values: evaluator label -> parameter -> the text given (the
    evaluator's declaration converts it)."""
    params: dict[str, dict[str, str]] = {}
    for item in values:
        target, sep, value = item.partition("=")
        evaluator, dot, name = target.partition(".")
        if not sep or not dot or not evaluator or not name:
            fail(f"--param expects EVALUATOR.PARAMETER=VALUE, got '{item}'", EXIT_USAGE)
        params.setdefault(evaluator, {})[name] = value
    return params


def parse_hosts(values: tuple[str, ...], option: str = "--host") -> list[dict[str, object]]:
    """Each value of a repeatable option as a YAML mapping (a host's settings)."""
    if not values:
        return []
    import yaml

    hosts = []
    for value in values:
        try:
            entry = yaml.safe_load(value)
        except (yaml.YAMLError, RecursionError):  # RecursionError: '[' * 1000 (found by bench/fuzz.py)
            entry = None
        if not isinstance(entry, dict):
            fail(f"{option} {value!r}: expected a YAML mapping such as '{{key: m, kind: python, callable: mod:fn}}'",
                  EXIT_USAGE)
        hosts.append(entry)
    return hosts


def plugin_manager(plugins: tuple[str, ...] = ()):
    from ..plugins import get_plugin_manager

    return get_plugin_manager(plugins).load()


JSON_OPTION = click.option("--json", "as_json", is_flag=True,
                            help="Print JSON (shape documented in docs/cli.md) instead of a table.")


class _OneLineUsageError(click.ClickException):
    """click's usage error, shown as Sonar shows every error: one ``error:`` line, exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"error: {one_line(self.format_message())} (see --help)", err=True)


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())


class OneLineGroup(click.Group):
    """The ``sonar`` group: a usage error of any command (unknown option, bad choice) is one line on
    stderr, not click's usage block (found by the fuzz suite; docs/reliability.md)."""

    def main(self, args=None, *rest, **kwargs):
        # Arguments are text like a dataset's: a lone surrogate (an argv byte that is not UTF-8, or
        # a truncated emoji) becomes U+FFFD before any option sees it, so no path, parameter or
        # run.json field can hold one (docs/reliability.md; found by bench/fuzz.py).
        args = sys.argv[1:] if args is None else args
        return super().main([clean_text(arg)[0] if isinstance(arg, str) else arg for arg in args], *rest, **kwargs)

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except _NO_ARGS:  # `sonar` alone shows the help, as click does
            raise
        except click.UsageError as exc:
            raise _OneLineUsageError(exc.format_message()) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except _NO_ARGS:  # `sonar` alone shows the help, as click does
            raise
        except click.UsageError as exc:
            raise _OneLineUsageError(exc.format_message()) from None
