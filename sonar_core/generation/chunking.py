"""Chunks: each document split by its headings, then by token count.

A *token* here is a word or a punctuation mark (``\\w+`` or one other non-space character): a
count that needs no model and is the same on every machine. A section (the text under one
heading) longer than ``max_tokens`` is cut at paragraph ends, a paragraph longer than that at
sentence ends, a sentence longer than that at ``max_tokens``. A user's own chunks (``.jsonl``)
are kept as they are.

A chunk's id is ``<source>#<n>`` (n from 1 in document order) or the user's own id; its
``heading`` is the path of headings above it (``Policy > Water damage``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .documents import Corpus, Document

__all__ = ["Chunk", "display_text", "split_corpus", "count_tokens", "MAX_TOKENS"]

#: Most tokens in one chunk made here.
MAX_TOKENS = 250
_TOKEN = re.compile(r"\w+|[^\w\s]")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[.!?。])\s+")


def count_tokens(text: str) -> int:
    """Words and punctuation marks in ``text``."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class Chunk:
    """One piece of one document: what a question is written from."""

    id: str
    source: str
    text: str
    heading: str
    position: int
    tokens: int

    def display(self) -> str:
        """The chunk as a prompt or an embedding sees it: its heading path, then its text."""
        return display_text(self.heading, self.text)


def display_text(heading: str, text: str) -> str:
    """What a chunk with ``heading`` and ``text`` is embedded as (:meth:`Chunk.display`; a graph file's
    chunk records hold the two apart)."""
    return f"{heading}\n{text}" if heading else text


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading path, body) of each section, in order; text before the first heading has no heading."""
    sections: list[tuple[str, str]] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []

    def close() -> None:
        content = "\n".join(body).strip()
        if content:
            sections.append((" > ".join(title for _, title in path), content))
        body.clear()

    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        match = None if in_code else _HEADING.match(line.strip())
        if match:
            close()
            level = len(match.group(1))
            path = [entry for entry in path if entry[0] < level] + [(level, match.group(2).strip())]
        else:
            body.append(line)
    close()
    return sections


def _pieces(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` tokens at paragraph, then sentence, then word ends."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    units: list[str] = []
    for paragraph in paragraphs:
        if count_tokens(paragraph) <= limit:
            units.append(paragraph)
            continue
        for sentence in _SENTENCE.split(paragraph):
            if count_tokens(sentence) <= limit:
                units.append(sentence)
                continue
            words = sentence.split()
            piece: list[str] = []
            for word in words:
                if piece and count_tokens(" ".join(piece + [word])) > limit:
                    units.append(" ".join(piece))
                    piece = []
                piece.append(word)
            if piece:
                units.append(" ".join(piece))
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        tokens = count_tokens(unit)
        if current and size + tokens > limit:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        current.append(unit)
        size += tokens
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def split_document(doc: Document, max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    """The chunks of one document (its own chunks for a chunk file)."""
    if doc.chunks:
        return [Chunk(c.id, c.source, c.text.strip(), "", n, count_tokens(c.text))
                for n, c in enumerate(doc.chunks, start=1) if c.text.strip()]
    chunks: list[Chunk] = []
    for heading, body in _sections(doc.text):
        for piece in _pieces(body, max_tokens):
            number = len(chunks) + 1
            chunks.append(Chunk(f"{doc.source}#{number}", doc.source, piece, heading, number, count_tokens(piece)))
    return chunks


def split_corpus(corpus: Corpus, max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    """Every document's chunks, documents in the corpus's order."""
    return [chunk for doc in corpus.documents for chunk in split_document(doc, max_tokens)]
