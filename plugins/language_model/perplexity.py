"""Perplexity of the actual answer under a local causal LM, computed by lmppl.

``perplexity = exp(mean token cross-entropy)``: lmppl's ``LM.get_perplexity`` scores each token of
the answer given the tokens before it (the first token has no context and is not scored). The
answer is tokenised without special tokens. Rows are sorted by length and sent to lmppl in
batches under a token budget, so padding stays small; lmppl pads on the right, so a padded row
scores as it would alone.
"""

from __future__ import annotations

import math
from typing import ClassVar, Iterable, Sequence

from sonar_core import Difference, Evaluator, Input, Metric, Param, Row, RowResult
from sonar_plugins.catalogue_differences import smollm_for

from .gptscore import DEFAULT_LM
from .likelihood import length_batches
from .loaders import load_perplexity_lm

__all__ = ["PerplexityEvaluator"]


class PerplexityEvaluator(Evaluator):
    """Perplexity of each actual answer (lower: the LM found the text more predictable)."""

    id = "perplexity"
    display_name: ClassVar[str] = "Perplexity"
    tagline: ClassVar[str] = "How predictable a local language model finds the answer (lower is more fluent)."
    description: ClassVar[str] = (
        "Perplexity measures how well a language model predicts each next token of the actual answer: "
        "`perplexity = exp(mean cross-entropy)` over the answer's tokens, each predicted from the tokens before "
        "it, computed with the `lmppl` library. It can be read as the average number of choices the model "
        "hesitates between; lower means the answer is more predictable (usually more fluent). The model is the "
        "embedded SmolLM2-135M-Instruct unless `perplexity_model` names another causal LM (the catalogue's "
        "distilgpt2 when it is in the local Hugging Face cache). Values depend on the model: compare models' "
        "answers under one scoring model. There is no threshold by default (the catalogue's 0.5 is below the "
        "smallest possible perplexity, 1); set `metric_threshold` to flag models. An answer of a single token "
        "has no scored token and is left unscored."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.ACTUAL_ANSWER,)
    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'transformers', 'lmppl')
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("perplexity_model", str, DEFAULT_LM,
              "Causal language model that scores the answers: a model the store knows (SmolLM2-135M-Instruct, "
              "distilgpt2), a local model folder or a Hugging Face id in the local cache."),
    )
    model_params: ClassVar[dict[str, str]] = {"perplexity_model": "causal_lm"}
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("perplexity", "Perplexity",
               "exp(mean negative log-likelihood) of the answer's tokens under the scoring model; lower is better.",
               value_range=(1.0, math.inf), higher_is_better=False, threshold=math.inf, is_primary=True),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        smollm_for("distilgpt2", "perplexity_model"),
        Difference(
            what="perplexity range: catalogue [0, inf], Sonar [1, inf]",
            why="perplexity = exp(mean cross-entropy) and a cross-entropy is never negative, so no value is "
                "below 1",
            action="none: the two ranges hold the same values",
            field="metric:perplexity",
        ),
        Difference(
            what="perplexity threshold: catalogue 0.5, Sonar inf (no problem is raised)",
            why="with lower-is-better and every perplexity at least 1, the catalogue's 0.5 would flag every row",
            action="set a threshold for your model and data (`--threshold perplexity=VALUE`) to have problems "
                   "raised",
            field="threshold:perplexity",
        ),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        lm = self.ctx.load_model(load_perplexity_lm, self.params["perplexity_model"])
        texts = [row.actual_output for row in rows]
        limit = lm.tokenizer.model_max_length
        lengths = [len(ids) for ids in lm.tokenizer(texts)["input_ids"]]
        scores: list[float | None] = [None] * len(rows)
        for batch in length_batches([min(n, limit) for n in lengths]):
            scorable = [i for i in batch if lengths[i] >= 2]
            if scorable:
                values = lm.get_perplexity([texts[i] for i in scorable], batch_size=len(scorable))
                for i, value in zip(scorable, values):
                    scores[i] = value if math.isfinite(value) else None
        results = []
        for score, length in zip(scores, lengths):
            details = {"tokens": length}
            if length > limit:
                details["scored_tokens"] = limit
            error = None
            if length < 2:
                error = "the answer has fewer than 2 tokens: no token to predict from a previous one"
            elif score is None:
                error = "perplexity overflowed (the model gave a scored token probability 0)"
            results.append(RowResult(values={"perplexity": score}, details=details, error_message=error))
        return results
