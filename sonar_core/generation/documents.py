"""Reading the documents a test set is generated from: folders and files, one :class:`Document` each.

Formats: ``.txt`` and ``.md`` (UTF-8 text; Markdown headings are kept as they are), ``.html`` /
``.htm`` (text and ``h1``-``h6`` headings, turned into Markdown headings; scripts and styles
dropped), ``.pdf`` (the text of each page, through pypdf) and ``.jsonl`` of the user's own chunks,
one ``{"id", "text", "source"}`` object a line (kept as they are, never split again).

A file that cannot be used (not UTF-8 text, a binary file, an encrypted or unreadable PDF, a file
past the size limit, a PDF without text) is *skipped* with a one-line reason when other files are
fine; the generation report lists every skip. A chunk file with a missing or repeated ``id`` is an
error naming the file and line (a user's own chunk ids are references, and guessing them would be
wrong). Nothing here writes anything.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable

from ..errors import DatasetError

__all__ = ["Document", "OwnChunk", "Corpus", "read_corpus", "SUFFIXES", "MAX_FILE_BYTES"]

#: The suffixes read (lower case); anything else in a folder is left alone and not reported.
SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".jsonl")
#: Largest file read (bytes): a bigger one is skipped (a 200 MB log is not a document).
MAX_FILE_BYTES = 50 * 2**20


@dataclass(frozen=True)
class OwnChunk:
    """A chunk the user gave in a ``.jsonl`` file: used as it is."""

    id: str
    text: str
    source: str


@dataclass(frozen=True)
class Document:
    """One file's text (``chunks`` instead for a chunk file) and the SHA-256 of its bytes."""

    source: str
    kind: str
    text: str
    sha256: str
    chunks: tuple[OwnChunk, ...] = ()


@dataclass
class Corpus:
    """Every document read, and the files skipped with why (one line each)."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def fingerprint(self) -> str:
        """SHA-256 over the documents' names and contents: the document graph's cache key part."""
        digest = hashlib.sha256()
        for doc in self.documents:
            digest.update(f"{doc.source}\0{doc.sha256}\n".encode())
        return digest.hexdigest()


class _HTMLText(HTMLParser):
    """Text of an HTML page with its headings as Markdown headings; script and style dropped."""

    _BLOCKS = {"p", "div", "li", "br", "tr", "section", "article", "table", "ul", "ol", "pre", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("script", "style", "head", "noscript"):
            self._skip += 1
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head", "noscript"):
            self._skip = max(0, self._skip - 1)
        elif (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456") or tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(" ".join(data.split()) if data.strip() else " ")


def _html_text(raw: str) -> str:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).splitlines()]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip()


class _Skip(Exception):
    """A file that cannot be used; the message says why (one line)."""


def _utf8(path: Path, raw: bytes) -> str:
    if b"\0" in raw[:8192]:
        raise _Skip("a binary file (NUL bytes), not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Skip(f"not UTF-8 text (byte {exc.start})") from None


def _pdf_text(path: Path) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:  # the generate extra brings pypdf
        raise _Skip("reading PDF needs pypdf (pip install 'sonar-eval[generate]')") from None
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise _Skip("an encrypted PDF (it needs a password)")
            except _Skip:
                raise
            except Exception:
                raise _Skip("an encrypted PDF (it needs a password)") from None
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except _Skip:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError, AttributeError) as exc:
        raise _Skip(f"an unreadable PDF ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''})"
                    ) from None
    text = "\n\n".join(page for page in pages if page)
    if not text.strip():
        raise _Skip("a PDF without extractable text (scanned pages need OCR first)")
    return text


def _own_chunks(path: Path, source: str, text: str) -> tuple[OwnChunk, ...]:
    chunks: list[OwnChunk] = []
    first: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise DatasetError(f"{where}: not a JSON object ({getattr(exc, 'msg', 'nested too deeply')})") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: expected an object with 'id', 'text' and 'source'")
        chunk_id = record.get("id")
        if isinstance(chunk_id, (int, float)) and not isinstance(chunk_id, bool):
            chunk_id = str(chunk_id)
        if not isinstance(chunk_id, str) or not chunk_id.strip():
            raise DatasetError(f"{where}, field 'id': missing (every chunk needs its own id)")
        if chunk_id in first:
            raise DatasetError(f"{where}, field 'id': duplicate id {chunk_id!r} (first at line {first[chunk_id]})")
        first[chunk_id] = number
        body = record.get("text")
        if not isinstance(body, str):
            raise DatasetError(f"{where}, field 'text': expected a string")
        origin = record.get("source", source)
        if not isinstance(origin, str) or not origin.strip():
            raise DatasetError(f"{where}, field 'source': expected a non-empty string")
        chunks.append(OwnChunk(chunk_id, body, origin))
    if not chunks:
        raise _Skip("a chunk file without chunks")
    return tuple(chunks)


def _files(roots: Iterable[Path]) -> list[tuple[Path, str]]:
    """(file, its source name) for every readable file under ``roots``, in a stable order."""
    found: list[tuple[Path, str]] = []
    for root in roots:
        if not root.exists():
            raise DatasetError(f"{root}: no such file or folder")
        if root.is_dir():
            for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES):
                found.append((path, f"{root.name}/{path.relative_to(root).as_posix()}"))
        else:
            if root.suffix.lower() not in SUFFIXES:
                raise DatasetError(f"{root}: unknown document format '{root.suffix}' (use {', '.join(SUFFIXES)})")
            found.append((root, root.name))
    names: dict[str, int] = {}
    unique = []
    for path, source in found:  # the same name under two roots: both kept, the second renamed
        names[source] = names.get(source, 0) + 1
        unique.append((path, source if names[source] == 1 else f"{source} ({names[source]})"))
    return unique


def read_corpus(paths: Iterable[str | Path], max_bytes: int = MAX_FILE_BYTES) -> Corpus:
    """Read every document under ``paths`` (files and folders); see the module docstring.

    Raises:
        DatasetError: a path that does not exist, a chunk file with a bad id, or no usable document
            at all (the message names what was looked at and why each file was skipped).
    """
    roots = [Path(p).expanduser() for p in paths]
    corpus = Corpus()
    files = _files(roots)
    for path, source in files:
        try:
            size = path.stat().st_size
            if size > max_bytes:
                raise _Skip(f"too large ({size / 2**20:.0f} MB; at most {max_bytes / 2**20:.0f} MB a file)")
            suffix = path.suffix.lower()
            if suffix == ".pdf":
                raw = path.read_bytes()
                corpus.documents.append(Document(source, "pdf", _pdf_text(path), hashlib.sha256(raw).hexdigest()))
                continue
            raw = path.read_bytes()
            text = _utf8(path, raw)
            digest = hashlib.sha256(raw).hexdigest()
            if suffix == ".jsonl":
                corpus.documents.append(Document(source, "chunks", "", digest, _own_chunks(path, source, text)))
            elif suffix in (".html", ".htm"):
                corpus.documents.append(Document(source, "html", _html_text(text), digest))
            else:
                corpus.documents.append(Document(source, "markdown" if suffix != ".txt" else "text", text, digest))
        except _Skip as exc:
            corpus.skipped.append({"source": source, "reason": str(exc)})
        except OSError as exc:
            corpus.skipped.append({"source": source, "reason": f"cannot read ({exc.strerror or type(exc).__name__})"})
    if not corpus.documents:
        where = ", ".join(str(r) for r in roots)
        if not files:
            raise DatasetError(f"{where}: no documents found (looked for {', '.join(SUFFIXES)})")
        reasons = "; ".join(f"{s['source']}: {s['reason']}" for s in corpus.skipped[:3])
        more = f" (and {len(corpus.skipped) - 3} more)" if len(corpus.skipped) > 3 else ""
        raise DatasetError(f"{where}: no usable document ({reasons}{more})")
    return corpus
