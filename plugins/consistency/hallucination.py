"""Hallucination: how consistent the answer is with the best-supporting retrieved context chunk.

``hallucination = max over chunks c of consistency(c, answer)``, where consistency is the
probability, in [0, 1], that a factual-consistency classifier gives to "the answer is supported
by the premise". The default model is Vectara's HHEM-2.1-Open, whose folder ships its own
classifier code (a flan-t5-base encoder with a scoring head) and a ``predict`` method; any
sequence classifier with a "consistent" label (or two labels, the second meaning consistent,
as HHEM's) works too. Higher is better: 1 means fully supported.
"""

from __future__ import annotations

from typing import ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult, load_sequence_classifier, model_inputs

__all__ = ["HallucinationEvaluator", "consistency_scores", "consistent_index"]

_BATCH = 16


def consistent_index(id2label: dict[int, str]) -> int:
    """The label meaning 'consistent' / 'supported' / 'entailment'; HHEM's convention (index 1) otherwise."""
    for index, name in id2label.items():
        lowered = str(name).lower()
        if lowered.startswith(("consistent", "entail", "support", "factual")):
            return int(index)
    if len(id2label) == 2:
        return 1
    labels = ", ".join(str(name) for _, name in sorted(id2label.items()))
    raise ValueError(f"the model has no label meaning consistent (its labels: {labels})")


def consistency_scores(model, tokenizer, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Probability that each hypothesis is consistent with its premise, for (premise, hypothesis) pairs."""
    import torch

    if not pairs:
        return []
    scores: list[float] = []
    with torch.inference_mode():
        if hasattr(model, "predict"):  # HHEM: its own prompt template and tokenizer
            for start in range(0, len(pairs), _BATCH):
                scores += [float(s) for s in model.predict(list(pairs[start:start + _BATCH]))]
            return scores
        index = consistent_index(model.config.id2label)
        for start in range(0, len(pairs), _BATCH):
            chunk = pairs[start:start + _BATCH]
            encoded = tokenizer([p for p, _ in chunk], [h for _, h in chunk], truncation="only_first",
                                padding=True, return_tensors="pt")
            scores += torch.softmax(model(**model_inputs(model, encoded)).logits.float(), dim=-1)[:, index].tolist()
    return scores


class HallucinationEvaluator(Evaluator):
    """Factual consistency of each answer with its retrieved context (best chunk), in [0, 1]."""

    id = "hallucination"
    display_name: ClassVar[str] = "Hallucination"
    tagline: ClassVar[str] = "Whether the answer is supported by the retrieved context, by a local HHEM model."
    description: ClassVar[str] = (
        "A factual-consistency classifier (by default Vectara's HHEM-2.1-Open, a fine-tuned flan-t5-base) scores "
        "each retrieved context chunk as the premise and the actual answer as the hypothesis; the metric is the "
        "maximum over the chunks, so an answer supported by one chunk is not hallucinated. Higher is better: "
        "low values mean facts in the answer that the context does not support. The model is not on the "
        "package registry: it (and google/flan-t5-base, its tokenizer) must be in the local Hugging Face cache "
        "or a local folder, otherwise the evaluator says so and does not run."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'transformers')
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("hallucination_model", str, "vectara/hallucination_evaluation_model",
              "Factual-consistency classifier: a Hugging Face id in the local cache or a local model folder. "
              "HHEM's folder runs its own model code (trust_remote_code)."),
    )
    model_params: ClassVar[dict[str, str]] = {"hallucination_model": "classifier"}
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("hallucination", "Hallucination",
               "Maximum over the retrieved context chunks of the probability that the chunk supports the answer; "
               "higher is better.", threshold=0.75, is_primary=True),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        model, tokenizer = self.ctx.load_model(load_sequence_classifier, self.params["hallucination_model"],
                                               trust_remote_code=True)
        pairs, owners = [], []
        for index, row in enumerate(rows):
            for chunk in row.context:
                if chunk and chunk.strip():
                    pairs.append((chunk, row.actual_output))
                    owners.append(index)
        scores = consistency_scores(model, tokenizer, pairs)
        per_row: list[list[float]] = [[] for _ in rows]
        for owner, score in zip(owners, scores):
            per_row[owner].append(score)
        return [RowResult(values={"hallucination": max(found) if found else None},
                          details={"chunk_scores": [round(s, 4) for s in found]},
                          error_message=None if found else "every retrieved context chunk is empty")
                for found in per_row]
