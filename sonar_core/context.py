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

# Candidate-break contexts whose Punkt verdict is remembered (a few MB); emptied when full.
_SENTBREAK_CACHE_SIZE = 200_000


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

        class MemoizingPunkt(PunktSentenceTokenizer):
            """Punkt that remembers its verdict on each candidate break's context.

            Untrained, Punkt's parameters (abbreviations, collocations, sentence starters,
            orthographic counts) are empty and stay so, so whether a context such as
            ``"word. Next"`` holds a break depends on that string alone; the same contexts
            recur across answers, and judging one (tokenising and annotating it) is most of
            Punkt's time. Sentences are exactly Punkt's.
            """

            def __init__(self) -> None:
                super().__init__()
                self._verdicts: dict[str, bool] = {}

            def text_contains_sentbreak(self, text: str) -> bool:
                verdict = self._verdicts.get(text)
                if verdict is None:
                    if len(self._verdicts) >= _SENTBREAK_CACHE_SIZE:
                        self._verdicts.clear()
                    verdict = self._verdicts[text] = super().text_contains_sentbreak(text)
                return verdict

        return MemoizingPunkt()

    def split_sentences(self, text: str) -> list[str]:
        """Split ``text`` into sentences (Punkt, untrained); blank pieces are dropped."""
        if not text or not text.strip():
            return []
        return [s for s in self._punkt.tokenize(text) if s.strip()]
