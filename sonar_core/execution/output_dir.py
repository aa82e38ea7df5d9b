"""The output folder's checks: writable before any work, and every run folder inside it.

A run must not learn that it cannot write its results after an hour of scoring, and a run id
from a shared configuration must not place files outside the output folder (docs/reliability.md).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import ConfigError, OutputError

__all__ = ["check_writable", "run_folder", "resolved"]


def resolved(folder: Path) -> Path:
    """``folder`` made absolute with its links followed; OutputError for a link loop or a name the system
    cannot take (too long)."""
    try:
        return folder.resolve()
    except RuntimeError:  # Python 3.11's "Symlink loop from ..."
        raise OutputError(f"{folder}: a loop of symbolic links; the output folder cannot be made there") from None
    except OSError as exc:
        raise OutputError(f"{folder}: {exc.strerror or type(exc).__name__}; the output folder cannot be made "
                          "there") from None


def check_writable(folder: Path) -> None:
    """Raise :class:`OutputError` unless files can be created in ``folder`` (or, while it does not
    exist yet, in its nearest existing parent, which must be a folder). Creates nothing that stays."""
    probe = folder
    try:
        while not probe.exists():
            if probe.parent == probe:
                break
            probe = probe.parent
        is_dir = probe.is_dir()
    except OSError as exc:  # a name past the system's limit
        raise OutputError(f"{probe}: {exc.strerror or type(exc).__name__}; the output folder {folder} cannot be "
                          "made there") from None
    if not is_dir:
        raise OutputError(f"{probe}: not a folder; the output folder {folder} cannot be made there")
    try:
        handle, name = tempfile.mkstemp(prefix=".sonar-write-check-", dir=probe)
        os.close(handle)
        os.unlink(name)
    except OSError as exc:
        raise OutputError(f"{probe}: cannot write there ({exc.strerror or type(exc).__name__})") from None


def run_folder(output_root: Path, run_id: str) -> Path:
    """``output_root / run_id``, checked to stay inside ``output_root`` (symbolic links resolved)."""
    root = resolved(output_root)
    run_dir = resolved(root / run_id)
    if run_dir == root or not run_dir.is_relative_to(root):
        raise ConfigError(f"run id {run_id!r}: the run folder would be outside the output folder {root}")
    return run_dir
