"""Files whose write errors name them.

``open`` names its file when it fails, but a failed ``write``, ``flush`` or ``close`` does not: a full disk
surfaces there, as "OSError: [Errno 28] No space left on device" with no file (issue 35: the run ended
with "output folder: No space left on device"). :func:`named_open` returns a handle whose errors carry
its path (``OSError.filename``), so :meth:`sonar_core.errors.OutputError.from_os_error` names the file that
could not be written; :func:`naming` does the same for a block.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

__all__ = ["naming", "named_open", "write_text"]


@contextmanager
def naming(path: str | os.PathLike) -> Iterator[None]:
    """An ``OSError`` raised in the block that names no file is given ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise


class _NamedFile:
    """A text or binary file handle (as ``open`` returns) whose write, flush and close errors name it."""

    def __init__(self, path: str | os.PathLike, handle: IO[Any]) -> None:
        self.path, self._handle = path, handle

    def write(self, data: Any) -> int:
        with naming(self.path):
            return self._handle.write(data)

    def flush(self) -> None:
        with naming(self.path):
            self._handle.flush()

    def close(self) -> None:
        with naming(self.path):
            self._handle.close()

    def __getattr__(self, name: str) -> Any:  # fileno, closed, ...
        return getattr(self._handle, name)

    def __enter__(self) -> "_NamedFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def named_open(path: str | os.PathLike, mode: str = "r", **kwargs: Any) -> _NamedFile:
    """``open(path, mode, **kwargs)``, its write errors naming ``path``."""
    return _NamedFile(path, open(path, mode, **kwargs))


def write_text(path: Path, text: str) -> None:
    """``path.write_text(text, encoding="utf-8")``, a failed write naming ``path``."""
    with named_open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
