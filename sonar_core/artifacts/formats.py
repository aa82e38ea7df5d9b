"""Writing one explanation format: ``<explanation>/<mime dir>/explanation.<ext>`` plus ``.meta``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import names
from ..named_files import named_open
from .jsontext import Fragments, write_indented

__all__ = ["write_format", "write_meta", "write_json", "write_atomic", "FORMAT_CLASSES"]

# The format class each MIME type stands for, as H2O Sonar's .meta files name them.
FORMAT_CLASSES = {
    names.MIME_JSON: "JsonFormat",
    names.MIME_CSV: "CsvFormat",
    names.MIME_JAY: "DatatableFormat",
    names.MIME_MARKDOWN: "MarkdownFormat",
    names.MIME_LEADERBOARD_MARKDOWN: "EvalStudioMarkdownFormat",
    names.MIME_HTML: "HtmlFormat",
    names.MIME_ZIP: "ZipFormat",
}


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary sibling and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with named_open(temporary, "wb") as handle:  # a full disk names the file
        handle.write(data)
    os.replace(temporary, path)


def write_json(path: Path, data: Any, fragments: Fragments | None = None) -> None:
    """JSON indented by 2, with a stable key order and no NaN (NaN is not JSON), written atomically.

    A run killed mid-write must not leave a truncated run.json behind: resume reads it.
    ``fragments`` reuses the text of objects already written elsewhere (see :mod:`.jsontext`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with named_open(temporary, "w", encoding="utf-8", newline="") as handle:  # "\n" on every platform
        write_indented(handle, data, fragments)
        handle.write("\n")
    os.replace(temporary, path)


def write_format(explanation_dir: Path, mime: str, files: dict[str, bytes | str | Any]) -> Path:
    """Write ``files`` (name -> bytes, text or JSON data) under the MIME folder, and its .meta."""
    folder = explanation_dir / names.mime_dir(mime)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        target = folder / name
        if isinstance(content, (bytes, str)):
            write_atomic(target, content.encode("utf-8") if isinstance(content, str) else content)
        else:
            write_json(target, content)
    write_meta(explanation_dir, mime, files)
    return folder


def write_meta(explanation_dir: Path, mime: str, files) -> None:
    """The ``.meta`` file beside a MIME folder: format class, MIME type and the file names in it."""
    format_class = FORMAT_CLASSES[mime]
    write_json(
        explanation_dir / f"{names.mime_dir(mime)}.meta",
        {
            "schema_version": names.SCHEMA_VERSION,
            "name": format_class,
            "full_name": f"sonar_core.formats.{format_class}",
            "mime": mime,
            # The same spelling as the descriptor's ``explanations[].explanation_type`` and the
            # problems' ``explanation_type`` (``global-llm-eval-results``), so the three join.
            "explanation_type": explanation_dir.name.replace("_", "-"),
            "files": sorted(files),
        },
    )
