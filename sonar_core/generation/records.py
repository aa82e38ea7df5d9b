"""The records of test-set generation: the document graph's parts as ``graph.json`` keeps them, and each
generated item on its way to the suite (its texts, its rule scores, its quality record, its outcome).

``TypedDict`` s: each is the plain JSON object the files hold (``graph.json``, the suite's lines and
``generation.json``); a ``NotRequired`` key is written only where it says something.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ..findings.generation_summary import ItemOutcome, ItemQuality
from ..jsontypes import JsonObject

__all__ = ["ChunkRecord", "DuplicateRecord", "TopicRecord", "LinkRecord", "ItemText", "CheckedItem", "RuleScores",
           "ItemQuality", "ItemOutcome", "SuiteLine"]


class ChunkRecord(TypedDict):
    """A chunk the graph kept."""
    id: str
    source: str
    heading: str
    position: int
    tokens: int
    text: str
    language: str
    topic: int
    terms: list[str]  #: its key terms, the strongest first


class DuplicateRecord(TypedDict):
    """A chunk dropped as the duplicate of another (``exact``, or ``near`` by embedding similarity)."""
    id: str
    source: str
    duplicate_of: str
    kind: str
    similarity: float


class TopicRecord(TypedDict):
    topic: int
    label: str  #: its members' commonest key terms
    chunks: int


class LinkRecord(TypedDict):
    """Two kept chunks (rows ``a`` < ``b``) that share key terms or are close in meaning."""
    a: int
    b: int
    similarity: float
    shared_terms: list[str]


class ItemText(TypedDict):
    """A written item's texts, as the rule checks read them."""
    key: str
    question: str
    answer: str
    language: str


class CheckedItem(ItemText):
    """An item with the passages a judged check reads it against."""
    passages: list[str]


class RuleScores(TypedDict):
    """An item's rule and embedding scores (0/1, and the closest other question's similarity)."""
    self_contained: int
    language_match: int
    near_duplicate: float
    self_reference: NotRequired[str]  #: the words that refer to a passage the reader never sees
    duplicate_of: NotRequired[str]  #: the earlier item it nearly repeats


class SuiteLine(TypedDict):
    """A test case of the generated suite (one line of its JSONL)."""
    test_case_key: str
    input: str
    expected_output: str
    context: list[str]
    categories: list[str]
    provenance: JsonObject  #: where the item came from and how it was written (docs/generate.md)
    quality: ItemQuality
