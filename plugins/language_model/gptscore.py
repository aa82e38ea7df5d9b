"""GPTScore: how likely a causal LM finds a text after an instruction (Fu et al., 2023).

Each metric is an instruction template. The model reads the filled-in prompt and the score is the
average negative log-likelihood (ANLL, natural log per token) of the scored tokens: the answer
after ``In other words,`` or ``Tl;dr``, or ``Answer: Yes`` after a conversation. Lower is better
(the model found the text more likely). Where the catalogue evaluates both directions (answer
given reference, reference given answer), the metric is the mean of the two ANLLs.

The four GPTScore evaluators are subclasses of :class:`GptScoreEvaluator` in their own modules;
they declare their metrics and how a row becomes (prefix, target) pairs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import ClassVar, Iterable, Sequence

from sonar_core import Difference, Evaluator, Metric, Param, Row, RowResult

from .likelihood import mean_target_nll
from .loaders import load_scoring_tokenizer

__all__ = ["GptScoreEvaluator", "anll_metric", "rewrite_pairs", "DEFAULT_LM"]

#: The embedded causal LM (the catalogue's gpt2-medium is not available offline).
DEFAULT_LM = "SmolLM2-135M-Instruct"


def anll_metric(key: str, name: str, question: str, primary: bool = False) -> Metric:
    """A GPTScore metric: ANLL in [0, inf), lower is better, no threshold by default (inf)."""
    return Metric(key, name, f"{question} Average negative log-likelihood of the scored tokens (lower is better).",
                  value_range=(0.0, math.inf), higher_is_better=False, threshold=math.inf, is_primary=primary)


def rewrite_pairs(instruction: str, reference: str, answer: str) -> list[tuple[str, str]]:
    """The catalogue's ``{instruction} {ref_hypo} In other words, {hypo_ref}`` in both directions.

    First the answer is scored after the reference, then the reference after the answer; the
    scored tokens are the ones after ``In other words,``.
    """
    return [(f"{instruction} {source.strip()} In other words,", " " + target.strip())
            for source, target in ((reference, answer), (answer, reference))]


class GptScoreEvaluator(Evaluator):
    """Base of the GPTScore evaluators: batched ANLL of every (prefix, target) pair of a batch of rows."""

    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'transformers')
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("gpt_score_model", str, DEFAULT_LM,
              "Causal language model that scores the texts: a model the store knows (SmolLM2-135M-Instruct, "
              "distilgpt2), a local model folder or a Hugging Face id in the local cache."),
    )
    model_params: ClassVar[dict[str, str]] = {"gpt_score_model": "causal_lm"}
    #: metric key -> the metric's instruction (how a row fills it in depends on the subclass).
    templates: ClassVar[dict[str, str]] = {}
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            what="language model: catalogue gpt2-medium, Sonar SmolLM2-135M-Instruct (embedded)",
            why="gpt2-medium is not embedded and Sonar downloads nothing at run time",
            action="values are SmolLM2's negative log-likelihoods, not comparable with H2O Sonar's: set "
                   "`gpt_score_model: gpt2-medium` (a model in the local Hugging Face cache) to compare",
            field="model",
        ),
        Difference(
            what="parameter gpt_score_model: catalogue default gpt2-medium and a list of 16 models (flan-t5, OPT, "
                 "GPT-2, GPT-J); Sonar defaults to SmolLM2-135M-Instruct and accepts any causal language model",
            why="the catalogue's flan-t5 models are sequence-to-sequence, which Sonar cannot score yet",
            action="name a causal language model (GPT-2, OPT, GPT-J, SmolLM2...): flan-t5 models cannot be scored",
            field="parameter:gpt_score_model",
        ),
    )

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        """(prefix, target) pairs of one metric for one row; the metric is the mean of their ANLLs."""
        raise NotImplementedError

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        model, tokenizer = self.ctx.load_model(load_scoring_tokenizer, self.params["gpt_score_model"])
        pairs: list[tuple[str, str]] = []
        owners: list[tuple[int, str]] = []
        for index, row in enumerate(rows):
            for key, template in self.templates.items():
                for pair in self.pairs(row, template):
                    pairs.append(pair)
                    owners.append((index, key))
        scores = mean_target_nll(model, tokenizer, pairs)
        collected: dict[tuple[int, str], list[float | None]] = defaultdict(list)
        for owner, score in zip(owners, scores):
            collected[owner].append(score)
        results = []
        for index in range(len(rows)):
            values: dict[str, float | None] = {}
            for key in self.templates:
                found = collected[(index, key)]
                values[key] = None if not found or None in found else sum(found) / len(found)
            error = "the scored text has no token" if all(v is None for v in values.values()) else None
            results.append(RowResult(values=values, error_message=error))
        return results
