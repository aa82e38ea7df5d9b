"""GPTScore: how likely a language model finds a text after an instruction (Fu et al., 2023).

Each metric is an instruction template. The model reads the filled-in prompt and the score is the
average negative log-likelihood (ANLL, natural log per token) of the scored tokens: the answer
after ``In other words,`` or ``Tl;dr``, or ``Answer: Yes`` after a conversation. Lower is better
(the model found the text more likely). Where the catalogue evaluates both directions (answer
given reference, reference given answer), the metric is the mean of the two ANLLs.

The model is one of the catalogue's choices (:data:`CATALOGUE_MODELS`), Sonar's embedded SmolLM2
(the default) or a local model folder; anything else is a one-line parameter error. A causal LM
scores the target after the prompt; a sequence-to-sequence model (flan-t5) reads the prompt in its
encoder and its decoder scores the target, as the GPTScore paper's code does.

The four GPTScore evaluators are subclasses of :class:`GptScoreEvaluator` in their own modules;
they declare their metrics and how a row becomes (prefix, target) pairs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Difference, Evaluator, Metric, Param, ParameterError, Row, RowResult

from .likelihood import mean_target_nll, seq2seq_target_nll
from .loaders import is_encoder_decoder, load_scoring_tokenizer, load_seq2seq_scorer

__all__ = ["GptScoreEvaluator", "anll_metric", "rewrite_pairs", "DEFAULT_LM", "CATALOGUE_MODELS", "model_choice_error"]

#: The embedded causal LM (the catalogue's gpt2-medium is not available offline).
DEFAULT_LM = "SmolLM2-135M-Instruct"
#: The catalogue's ``gpt_score_model`` choices, in its order (Hugging Face ids, found in the local cache).
CATALOGUE_MODELS = (
    "google/flan-t5-small", "google/flan-t5-base", "google/flan-t5-large", "google/flan-t5-xl", "google/flan-t5-xxl",
    "facebook/opt-125m", "facebook/opt-350m", "facebook/opt-1.3b", "facebook/opt-2.7b", "facebook/opt-6.7b",
    "facebook/opt-13b", "facebook/opt-66b", "gpt2-medium", "gpt2-large", "gpt2-xl", "EleutherAI/gpt-j-6B",
)
#: Sonar's names of its embedded default (the model store's name and aliases).
EMBEDDED_NAMES = (DEFAULT_LM, "smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct")


def _is_folder_ref(ref: str) -> bool:
    # As the model store reads a reference: a path (the store then says when there is no such folder).
    path = Path(ref).expanduser()
    return path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") > 1 or path.is_dir()


def model_choice_error(ref: str, evaluator_id: str) -> str | None:
    """Why ``ref`` is no GPTScore model (one line), or None for a catalogue choice, the embedded default
    or a local folder."""
    if ref in CATALOGUE_MODELS or ref in EMBEDDED_NAMES or _is_folder_ref(ref):
        return None
    return (f"parameter 'gpt_score_model' of evaluator '{evaluator_id}' must be one of the catalogue's models "
            f"({', '.join(CATALOGUE_MODELS)}), Sonar's embedded {DEFAULT_LM} or a local model folder, got {ref!r}")


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
              "Language model that scores the texts: one of the catalogue's (google/flan-t5-small, -base, -large, "
              "-xl, -xxl; facebook/opt-125m, -350m, -1.3b, -2.7b, -6.7b, -13b, -66b; gpt2-medium, gpt2-large, "
              "gpt2-xl; EleutherAI/gpt-j-6B), found in the local Hugging Face cache, Sonar's embedded "
              "SmolLM2-135M-Instruct (the default) or a local model folder. flan-t5 models are scored as "
              "sequence-to-sequence models (the decoder's log-likelihood of the target given the prompt)."),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            "model: catalogue default gpt2-medium, Sonar default its embedded SmolLM2-135M-Instruct",
            "gpt2-medium is not on the package registry and runs are offline; the catalogue's models are still "
            "choices when they are in the local Hugging Face cache",
            "set gpt_score_model: gpt2-medium (with the model in the local cache) to compare ANLLs with H2O "
            "Sonar's; ANLLs of different models are not comparable",
            field="model",
        ),
        Difference(
            "parameter gpt_score_model: catalogue default gpt2-medium and a list of 16 models; Sonar defaults to its "
            "embedded SmolLM2-135M-Instruct and accepts the 16 (flan-t5 scored as sequence-to-sequence models) and "
            "a local model folder; any other name is an error",
            "runs are offline: the catalogue's models are used from the local Hugging Face cache, and a model "
            "saved in a folder is as good a choice",
            "name one of the catalogue's models (in the local cache) to compare with H2O Sonar's numbers",
            field="parameter:gpt_score_model",
        ),
    )
    model_params: ClassVar[dict[str, str]] = {"gpt_score_model": "causal_lm"}
    #: metric key -> the metric's instruction (how a row fills it in depends on the subclass).
    templates: ClassVar[dict[str, str]] = {}

    def pairs(self, row: Row, instruction: str) -> list[tuple[str, str]]:
        """(prefix, target) pairs of one metric for one row; the metric is the mean of their ANLLs."""
        raise NotImplementedError

    @classmethod
    def validate_params(cls, given: dict[str, Any] | None) -> dict[str, Any]:
        """The base's checks, then: the model is a catalogue choice, the embedded default or a folder."""
        params = super().validate_params(given)
        problem = model_choice_error(params["gpt_score_model"], cls.id)
        if problem:
            raise ParameterError(problem)
        return params

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        ref = self.params["gpt_score_model"]
        if is_encoder_decoder(self.ctx.resolve_model(ref)):
            model, tokenizer = self.ctx.load_model(load_seq2seq_scorer, ref)
            score = seq2seq_target_nll
        else:
            model, tokenizer = self.ctx.load_model(load_scoring_tokenizer, ref)
            score = mean_target_nll
        pairs: list[tuple[str, str]] = []
        owners: list[tuple[int, str]] = []
        for index, row in enumerate(rows):
            for key, template in self.templates.items():
                for pair in self.pairs(row, template):
                    pairs.append(pair)
                    owners.append((index, key))
        scores = score(model, tokenizer, pairs)
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
