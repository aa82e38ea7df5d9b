"""``sonar run``'s trace flags (``--traces FILE...``, ``--trace-scope``, the filters and the sample), kept here
so that ``cli.py`` adds them with one decorator and one configuration key (docs/traces.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from .cli_common import fail
from .errors import EXIT_USAGE

__all__ = ["trace_run_options", "trace_overrides"]

_OPTIONS = [
    click.option("--traces", "traces", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
                 help="Score production traces: OTLP JSON lines or protobuf span files, or folders of them "
                      "(repeatable; docs/traces.md)."),
    click.option("--trace-scope", type=click.Choice(["span", "trace", "session"]), default=None,
                 help="What a row is: one LLM call (span), one trace (default), or one session's traces as a "
                      "conversation."),
    click.option("--span-kind", "span_kinds", multiple=True, metavar="KIND",
                 help="Span scope: the span kinds that become rows (default LLM); trace and session scope: keep "
                      "those with a span of this kind (repeatable)."),
    click.option("--span-name", "span_names", multiple=True, metavar="PATTERN",
                 help="Keep spans (traces, sessions) with a span whose name matches this shell pattern (repeatable)."),
    click.option("--span-attr", "span_attrs", multiple=True, metavar="KEY=VALUE",
                 help="Keep spans (traces, sessions) with a span that has this attribute value (repeatable)."),
    click.option("--sample-rate", type=float, default=None, metavar="RATE",
                 help="Keep this share of the rows (0 < RATE <= 1), chosen by a hash of each id and the seed."),
    click.option("--sample-seed", type=int, default=None, metavar="N", help="Seed of --sample-rate (default 0)."),
]


def trace_run_options(command: Callable) -> Callable:
    """The trace flags, as ``sonar run`` options (they reach the command as keyword arguments)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def trace_overrides(flags: dict[str, Any]) -> dict[str, Any] | None:
    """The ``traces:`` keys the flags set (None when none is given); they refine a configuration file's."""
    attributes = {}
    for item in flags.get("span_attrs") or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--span-attr expects KEY=VALUE, got '{item}'", EXIT_USAGE)
        attributes[key.strip()] = value
    given = {
        "files": [str(p) for p in flags.get("traces") or ()], "scope": flags.get("trace_scope"),
        "span_kinds": list(flags.get("span_kinds") or ()), "span_names": list(flags.get("span_names") or ()),
        "attributes": attributes, "sample_rate": flags.get("sample_rate"), "seed": flags.get("sample_seed"),
    }
    given = {key: value for key, value in given.items() if value not in (None, [], {})}
    return given or None
