"""The records of a host pipeline (:mod:`.pipeline`): an answered item as ``answers.jsonl`` keeps it, an item
no host answered (``failed_items.json``), each host's counts and run.json's ``pipeline`` record.

``TypedDict`` s, so each is the plain JSON object it always was; a key marked ``NotRequired`` is written only
where it says something (a one-epoch run's records have no ``epoch``: its files are as they were).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ..conversation import Turn

__all__ = ["AnswerRecord", "FailedItem", "HostCounts", "EpochsSummary", "PipelineSummary", "FinishedFields"]


class AnswerRecord(TypedDict):
    """One answered item: a line of ``answers.jsonl``, read back on resume."""
    test_case_key: str
    model_key: str
    epoch: NotRequired[int]  #: only where it is not 0
    actual_output: str
    actual_duration: float  #: seconds
    cost: float | None  #: USD; None without a price (0 for an answer reused from epoch 0)
    input_tokens: int | None
    output_tokens: int | None
    contexts: list[str] | None  #: a RAG host's retrieved contexts
    cached: bool
    conversation: NotRequired[list[Turn]]  #: a conversation's every turn
    cleaned: NotRequired[list[str]]  #: the fields whose text was cleaned (docs/reliability.md)
    reused: NotRequired[bool]  #: a deterministic host's answer of epoch 0, reused (docs/epochs.md)


class FailedItem(TypedDict):
    """An item no host answered: an entry of ``failed_items.json``."""
    test_case_key: str
    model_key: str
    epoch: NotRequired[int]
    error: str


class HostCounts(TypedDict):
    """One host's items in a pipeline, and how each was answered."""
    items: int
    answered: int
    fetched: int
    cached: int
    resumed: int
    failed: int
    reused: NotRequired[int]  #: only when the run has several epochs


class EpochsSummary(TypedDict):
    """run.json's ``pipeline.epochs``: the epochs and the deterministic hosts asked once."""
    epochs: int
    deterministic_hosts: list[str]
    reused_answers: dict[str, int]
    notes: list[str]


class PipelineSummary(TypedDict):
    """run.json's ``pipeline`` record."""
    test_suite: str
    test_suite_fingerprint: str
    seconds: float
    hosts: dict[str, HostCounts]
    failed_items: int
    dataset: str  #: the produced dataset's path in the run folder
    epochs: NotRequired[EpochsSummary]


class FinishedFields(TypedDict):
    """What the runner's ``finished pipeline`` journal event adds (001's fields)."""
    time: float
    total_finished: int
    finished_counts: dict[str, int]
