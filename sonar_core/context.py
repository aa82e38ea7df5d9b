"""Shared services the core hands to evaluators.

Evaluators never build their own infrastructure: sentence splitting, the model store and the
embedding service, judges, model hosts and the run memo come from the
:class:`EvaluationContext` the run hands each evaluator. The context hands out only what the run
gave it: asking for a service the run did not provide is an error naming it, never a service
built on the spot (which would hide a wiring mistake behind a second cache or configuration).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .hosts import HostPool
    from .llm import LLMClient, LLMService
    from .models import EmbeddingService, ModelStore
    from .registry import Registries

from .run_memo import RunMemo

__all__ = ["EvaluationContext"]

# Candidate-break contexts whose Punkt verdict is remembered (a few MB); emptied when full.
_SENTBREAK_CACHE_SIZE = 200_000


@dataclass(kw_only=True)
class EvaluationContext:
    """What an evaluator may use while it scores rows.

    Attributes:
        memo: results the run's evaluators share (:mod:`sonar_core.run_memo`): one evaluator puts
            what another of the same run would compute again. Always given: one per run.
        logger: logs into the evaluator's ``log/explainer_run_<uuid>.log``.
        embeddings: the run's embedding service (None: the run provides none; :meth:`embed` says so).
        device: where models run (``cpu``, ``cuda``); ``auto`` picks CUDA when visible (resolved
            on first model use, so evaluators without models never import torch).
        llm: the run's LLM service (judges): configurations, response cache, shared clients (None: the
            run provides none; :meth:`judge` says so).
        label: the evaluator's name in the run (journal events carry it).
        hosts: the run's models under test (None when the run has none).
        plugins: the run's own plugin manager (its ``-p`` modules included): evaluators look up what
            plugins register (perturbators, say) here, never in a process-wide one.
    """

    memo: RunMemo
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("sonar.evaluator"))
    embeddings: "EmbeddingService | None" = None
    device: str = "auto"
    llm: "LLMService | None" = None
    label: str = ""
    hosts: "HostPool | None" = None
    plugins: "Registries | None" = None

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

    @property
    def model_device(self) -> str:
        """The concrete device for loading a model (``auto`` resolved: it imports torch)."""
        from .models import pick_device

        return pick_device(self.device)

    @property
    def models(self) -> "ModelStore":
        """The process's model store: finds and loads local models (never downloads)."""
        if self.embeddings is not None:
            return self.embeddings.store
        from .models import get_store

        return get_store()

    def load_model(self, loader: Callable[..., Any], ref: str, *, device: str | None = None, **options: Any) -> Any:
        """The model ``ref`` as built by ``loader``, loaded once per process and shared by the run.

        ``loader(store, ref, device, **options)`` is a loader such as
        :func:`~sonar_core.load_sequence_classifier` or one of the evaluator's own family; ``device``
        defaults to the run's (``auto`` resolved). A model that is not available offline raises
        :class:`~sonar_core.ModelMissingError`.
        """
        return loader(self.models, ref, device or self.model_device, **options)

    def resolve_model(self, ref: str) -> Path:
        """The local folder (or file) of model ``ref``; :class:`~sonar_core.ModelMissingError` when it
        is not available offline. Lets an evaluator choose between models before loading one."""
        return self.models.resolve(ref)

    def embed(self, texts: list[str], model: str | None = None) -> "np.ndarray":
        """L2-normalised sentence embeddings of ``texts`` (n, d), each unique text encoded once per run."""
        if self.embeddings is None:
            raise RuntimeError(f"{self._who()} asked for embeddings, but the run provided no embedding service "
                               "(EvaluationContext.embeddings is None)")
        return self.embeddings.embed(texts, model)

    def judge(self, key: str | None = None) -> "LLMClient":
        """The client of LLM configuration ``key`` (None: the run's default judge).

        ``judge(key).complete(messages)`` / ``.complete_many(requests)`` answer from the response
        cache or the LLM, with the run's concurrency bound, rate limit and retries.
        """
        if self.llm is None:
            raise RuntimeError(f"{self._who()} asked for a judge, but the run provided no LLM service "
                               "(EvaluationContext.llm is None)")
        return self.llm.client(self.llm.judge_key(key))

    def _who(self) -> str:
        return f"evaluator '{self.label}'" if self.label else "an evaluator"
