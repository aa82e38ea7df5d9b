"""``sonar view [FOLDER...] [--port N]``: serve the runs under the folders on 127.0.0.1 (docs/view.md)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import fail
from ..errors import EXIT_USAGE

__all__ = ["view_command"]


@click.command("view")
@click.argument("folders", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on (0: any free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but 127.0.0.1 lets other machines read the results.")
def view_command(folders: tuple[Path, ...], port: int, host: str) -> None:
    """Browse the runs under FOLDER... (default: ./reports) in a local web page: every test case, paged,
    searched, filtered and sorted in DuckDB over the Parquet row results, and two runs compared (what
    `sonar compare` concludes, the flipped rows filtered). Read-only; Ctrl-C stops it."""
    try:
        from ..view.server import make_server
        import duckdb  # noqa: F401  (the view extra)
    except ImportError:
        fail("sonar view needs DuckDB: pip install 'sonar-eval[view]'", EXIT_USAGE)
        return
    roots = list(folders) or [Path("reports")]
    try:
        server = make_server(roots, host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_USAGE)
        return
    click.echo(f"Sonar view on http://{server.server_address[0]}:{server.server_address[1]}/ (Ctrl-C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
