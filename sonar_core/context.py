"""Shared services the core hands to evaluators.

Evaluators never build their own infrastructure: sentence splitting (and later embeddings,
judges and model hosts) come from the one :class:`EvaluationContext` of the run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

__all__ = ["EvaluationContext"]


@dataclass
class EvaluationContext:
    """What an evaluator may use while it scores rows.

    Attributes:
        work_dir: the evaluator's ``work/`` folder (read-only for plugins: the core writes).
        logger: logs into the evaluator's ``log/explainer_run_<uuid>.log``.
        regex_timeout_s: time bound, in seconds, for one regular-expression search.
    """

    work_dir: Path | None = None
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("sonar.evaluator"))
    regex_timeout_s: float = 1.0

    @cached_property
    def _punkt(self):
        # An untrained Punkt tokenizer needs no NLTK data download.
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        return PunktSentenceTokenizer()

    def split_sentences(self, text: str) -> list[str]:
        """Split ``text`` into sentences (Punkt, untrained); blank pieces are dropped."""
        if not text or not text.strip():
            return []
        return [s for s in self._punkt.tokenize(text) if s.strip()]
