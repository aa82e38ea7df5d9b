"""rich, for the commands that print tables, imported when one first prints.

``sonar run`` reports through click and never needs rich; importing it is about 40 ms of every
process. :data:`out` stands for the CLI's one ``rich.console.Console`` and makes it on first use;
``RichTable`` and ``RichText`` make rich's ``Table`` and ``Text``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["LazyConsole", "RichTable", "RichText"]


class LazyConsole:
    """A ``rich.console.Console(**settings)`` made on first attribute use, then used for everything."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self._console = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._settings)
        return getattr(self._console, name)


def terminal_width() -> int | None:
    """Off a terminal (pipes, CI logs, tests) rich would wrap tables at 80 columns; give it room, unless
    ``COLUMNS`` says how wide the output is (then rich reads it, as it does on a terminal)."""
    return None if sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit() else 200


def RichTable(*args: Any, **kwargs: Any):  # noqa: N802 - stands for the class
    """``rich.table.Table(*args, **kwargs)``."""
    from rich.table import Table

    return Table(*args, **kwargs)


def RichText(*args: Any, **kwargs: Any):  # noqa: N802 - stands for the class
    """``rich.text.Text(*args, **kwargs)``."""
    from rich.text import Text

    return Text(*args, **kwargs)
