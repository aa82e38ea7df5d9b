"""The names an ``epoch_reducer`` setting may take, read once for the configuration and the findings.

``mean`` and ``majority``; ``pass_at_k`` and ``pass_hat_k`` (k = the run's number of epochs);
``pass_at_K`` and ``pass_hat_K`` for a whole number K from 1 to the number of epochs (``pass_at_2``).
What each computes is :mod:`sonar_core.findings.epoch_reducers` (docs/epochs.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from .errors import ConfigError

__all__ = ["EpochReducer", "parse_epoch_reducer", "check_dataset_epochs", "REDUCER_NAMES"]

#: The names without a number; ``pass_at_K`` / ``pass_hat_K`` add any K >= 1.
REDUCER_NAMES = ("mean", "majority", "pass_at_k", "pass_hat_k")
_WITH_K = re.compile(r"(pass_at|pass_hat)_(k|[1-9][0-9]{0,5})")


@dataclass(frozen=True)
class EpochReducer:
    """A parsed ``epoch_reducer``: its ``kind`` (mean, majority, pass_at, pass_hat) and ``k`` (None: every epoch)."""

    name: str
    kind: str
    k: int | None = None

    def k_for(self, epochs: int) -> int:
        """The k of a pass reducer in a run of ``epochs`` epochs."""
        return epochs if self.k is None else self.k

    def label(self) -> str:
        """``pass@2``, ``pass^k``, ``mean``... as the reports name it."""
        if self.kind not in ("pass_at", "pass_hat"):
            return self.kind
        return ("pass@" if self.kind == "pass_at" else "pass^") + ("k" if self.k is None else str(self.k))

    def check_epochs(self, epochs: int, where: str) -> None:
        """Raise ValueError (one line) when K is more than the ``epochs`` the run has (``where`` says whose)."""
        if self.k is not None and self.k > epochs:
            raise ValueError(f"'epoch_reducer' {self.name}: K = {self.k} is more than the {epochs} epoch(s) of "
                             f"{where}; use a K from 1 to {epochs}, or pass_at_k / pass_hat_k for all of them")


def parse_epoch_reducer(name: str) -> EpochReducer:
    """The reducer ``name`` names; ValueError (one line, listing the names) for anything else."""
    if name in ("mean", "majority"):
        return EpochReducer(name, name)
    found = _WITH_K.fullmatch(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"unknown epoch reducer {name!r} (use mean, majority, pass_at_k, pass_hat_k, or "
                         "pass_at_K / pass_hat_K with a whole number K from 1 to the number of epochs, e.g. pass_at_2)")
    k = None if found.group(2) == "k" else int(found.group(2))
    return EpochReducer(name, found.group(1), k)


def check_dataset_epochs(name: str, rows: Iterable[Any], source: str) -> None:
    """ConfigError (one line naming ``source`` and the setting) when ``pass_at_K`` / ``pass_hat_K`` asks for
    more epochs than a ready dataset's ``epoch`` column holds (``rows``: its rows, each with ``epoch``)."""
    reducer = parse_epoch_reducer(name)
    if reducer.k is None:
        return
    epochs = 1 + max((row.epoch for row in rows), default=0)
    try:
        reducer.check_epochs(epochs, "the dataset (its 'epoch' column)")
    except ValueError as error:
        raise ConfigError(f"{source}: {error}") from None
