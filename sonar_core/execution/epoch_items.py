"""Epochs in the host pipeline: which items are asked, which reuse a deterministic host's answer.

A run with ``epochs: N`` asks every host every test case N times, epoch e with the request's
repeat index e (each epoch its own response-cache entry; epoch 0's request is the one a
one-epoch run makes). A host that is deterministic (temperature 0, greedy decoding, or declared
so) would give the same answer N times: it is asked once, in epoch 0, and that answer is reused
for the other epochs. The journal, run.json (``pipeline.epochs``) and index.html say so.
"""

from __future__ import annotations

from typing import Any

from .answers import AnswerRecord, EpochsSummary

__all__ = ["EpochPlan", "epoch_row_key"]


def epoch_row_key(test_case_key: str, model_key: str, epoch: int) -> str:
    """The produced row's key: epoch 0's is a one-epoch run's (``case::model``), later epochs add ``::epoch<e>``."""
    base = f"{test_case_key}::{model_key}"
    return base if epoch == 0 else f"{base}::epoch{epoch}"


class EpochPlan:
    """The run's epochs and its deterministic hosts; counts the answers reused."""

    def __init__(self, hosts: Any, epochs: int) -> None:
        self.epochs = max(1, int(epochs or 1))
        self.deterministic = ([key for key in hosts.keys() if getattr(hosts.get(key), "deterministic", False)]
                              if self.epochs > 1 else [])
        self.reused: dict[str, int] = {key: 0 for key in self.deterministic}

    def reuses(self, item: Any) -> bool:
        """Whether ``item`` takes epoch 0's answer instead of asking (a deterministic host, epoch > 0)."""
        return item.epoch > 0 and item.host in self.reused

    def note(self, key: str) -> str:
        """The sentence the journal, run.json and the report give a deterministic host."""
        return f"{key}: deterministic, asked once, answer reused for {self.epochs} epochs"

    def journal(self, journal: Any) -> None:
        """One ``reusing deterministic answers`` event per deterministic host, before anything is asked."""
        for key in self.deterministic:
            journal.event("reusing deterministic answers", "Pipeline", "run", model_key=key, epochs=self.epochs,
                          note=self.note(key))

    def reused_record(self, item: Any, store: Any) -> AnswerRecord | None:
        """Epoch 0's answer record for ``item`` (None when epoch 0 was not answered), as this epoch's.

        The reused answer cost nothing more: its ``cost`` is 0 where epoch 0's was known.
        """
        first = store.get((item.row.test_case_key, item.host, 0))
        if first is None:
            return None
        self.reused[item.host] += 1
        return {**first, "epoch": item.epoch, "cost": None if first.get("cost") is None else 0.0, "cached": True,
                "reused": True}

    def summary(self) -> EpochsSummary | None:
        """run.json's ``pipeline.epochs`` (None for one epoch: run.json stays as it was)."""
        if self.epochs == 1:
            return None
        return {"epochs": self.epochs, "deterministic_hosts": list(self.deterministic),
                "reused_answers": dict(self.reused), "notes": [self.note(key) for key in self.deterministic]}
