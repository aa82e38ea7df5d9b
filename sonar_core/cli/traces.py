"""``sonar traces``: ``serve`` (an OTLP/HTTP receiver writing span files) and ``inspect`` (what span files hold);
and ``sonar run``'s trace flags (``--traces FILE...``, ``--trace-scope``, the filters and the sample), kept here so
that :mod:`.app` adds them with one decorator and one configuration key. docs/traces.md has it all.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import click

from .common import JSON_OPTION, OneLineGroup, fail, out
from ..errors import EXIT_OK, EXIT_USAGE, SonarError
from ..terminal import RichTable, RichText

__all__ = ["traces_command", "trace_run_options", "trace_overrides"]

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
    click.option("--trace-workers", default=None, metavar="N|auto",
                 help="Processes that decode and map spans beside the run's own (default auto: two when the span "
                      "files hold 64 MiB or more and the run may use two CPUs; 1: none)."),
]


def trace_run_options(command: Callable) -> Callable:
    """The trace flags, as ``sonar run`` options (they reach the command as keyword arguments)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def trace_overrides(flags: Mapping[str, Any]) -> dict[str, object] | None:
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
        "workers": flags.get("trace_workers"),
    }
    given = {key: value for key, value in given.items() if value not in (None, [], {})}
    return given or None


@click.group("traces", cls=OneLineGroup)
def traces_command() -> None:
    """Production traces: receive OpenTelemetry spans, look into span files (score them with sonar run --traces)."""


@traces_command.command("serve")
@click.option("--output-dir", "-o", "folder", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder the span files go to (spans-000001.jsonl, spans-000002.pb, ...).")
@click.option("--port", type=click.IntRange(0, 65535), default=4318, show_default=True,
              help="Port to listen on (4318 is OTLP/HTTP's; 0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 accepts other machines (no authentication: mind who can reach it).")
@click.option("--max-body-mb", type=click.FloatRange(min=0.001), default=16.0, show_default=True,
              help="Largest request body (also once decompressed); a larger one is answered 400.")
@click.option("--max-file-mb", type=click.FloatRange(min=0.001), default=64.0, show_default=True,
              help="Start a new span file once the current one passes this size.")
def serve_command(folder: Path, port: int, host: str, max_body_mb: float, max_file_mb: float) -> None:
    """Receive spans over OTLP/HTTP (POST /v1/traces, protobuf or JSON, gzip or not) and append them to
    span files that `sonar run --traces FOLDER` reads. Ctrl-C stops it; it then prints what it received."""
    from ..traces.receiver import Receiver

    say = lambda line: click.echo(line, err=True)  # noqa: E731
    try:
        receiver = Receiver(folder, host=host, port=port, max_body_bytes=int(max_body_mb * 2**20),
                            max_file_bytes=int(max_file_mb * 2**20), say=say)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_USAGE)
        return
    # SIGTERM stops it as Ctrl-C does: the span files are closed, the counts printed.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    say(f"listening on {receiver.address}/v1/traces, writing span files to {folder} (Ctrl-C stops)")
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        receiver.close()
    summary = receiver.summary()
    rejected = sum(summary["rejected_requests"].values())
    say(f"stopped: {summary['accepted_requests']} request(s) with {summary['spans']} span(s) written to "
        f"{len(summary['files'])} file(s); {rejected} request(s) rejected"
        + (" (" + ", ".join(f"{n} {reason}" for reason, n in summary["rejected_requests"].items()) + ")"
           if rejected else ""))
    sys.exit(EXIT_OK)


@traces_command.command("inspect")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@JSON_OPTION
def inspect_command(files: tuple[Path, ...], as_json: bool) -> None:
    """What span FILES (or folders) hold: spans by convention and kind, traces, sessions, models, and what
    a run would skip and why."""
    from ..traces.files import resolve_files
    from ..traces.inspect import inspect_spans

    try:
        found = inspect_spans(resolve_files([str(f) for f in files]))
    except SonarError as exc:
        fail(str(exc).splitlines()[0], exc.exit_code)
        return
    if as_json:
        from ..listings import LISTING_SCHEMA_VERSION, to_json

        click.echo(to_json({"schema_version": LISTING_SCHEMA_VERSION, **found}), nl=False)
        return
    out.print(f"{found['spans_read']:,} span(s) in {found['traces']:,} trace(s) ({found['root_spans']:,} root span(s)), "
              f"{found['sessions']:,} session(s), from {found['first_start']} to {found['last_end']}",
              markup=False, highlight=False)
    table = RichTable(title="Spans by convention and kind")
    for column in ("Convention/kind", "Spans"):
        table.add_column(column)
    for kind, count in found["spans_by_kind"].items():
        table.add_row(RichText(kind), f"{count:,}")
    out.print(table)
    if found["llm_models"]:
        out.print("LLM models: " + ", ".join(f"{m} ({n:,})" for m, n in found["llm_models"].items()),
                  markup=False, highlight=False)
    skipped = {**{f"span: {r}": n for r, n in found["spans_skipped"].items()},
               **{f"line: {r}": n for r, n in found["lines_skipped"].items()}}
    if skipped:
        table = RichTable(title="Skipped (a run counts these in its dataset problem)")
        for column in ("Reason", "Count", "First example"):
            table.add_column(column)
        for reason, count in skipped.items():
            example = found["skip_examples"].get(reason.split(": ", 1)[1], [""])[0]
            table.add_row(RichText(reason), f"{count:,}", RichText(example))
        out.print(table)
