"""Groundedness (Semantic Similarity): every answer sentence must have a close sentence in the retrieved context."""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, Metric, Param, Row, RowResult
from sonar_plugins.catalogue_differences import minilm_for

from .base import EMBEDDING_MODEL, MODEL_NOTE, SemanticEvaluator
from .sentences import SENTENCE_LEVEL, SENTENCE_PARAMETERS
from .vectors import similarities

__all__ = ["GroundednessSemanticSimilarityEvaluator", "EMPTY_EMBEDDING"]

#: The row's error message when the answer holds nothing to embed (and the detail flag's name).
EMPTY_EMBEDDING = "the actual answer has no sentence with words, so its embedding is empty"
# Longest sentence quoted in an insight's description (the full text is in its attributes).
_QUOTE_LIMIT = 200


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT - 1] + "…"


class GroundednessSemanticSimilarityEvaluator(SemanticEvaluator):
    """``groundedness`` in [0, 1] per row: the similarity of the answer's least supported sentence."""

    id = "groundedness_semantic_similarity"
    display_name: ClassVar[str] = "Groundedness (Semantic Similarity)"
    tagline: ClassVar[str] = "Whether every sentence of the answer is backed by a sentence of the retrieved context."
    description: ClassVar[str] = (
        "Groundedness (Semantic Similarity) checks that a RAG answer is built from its retrieved context. Each "
        "actual answer sentence `a` is scored by its closest sentence `c` among all sentences of all context "
        "chunks, and the row takes the weakest sentence: `groundedness = min({max({cosine(emb(a), emb(c)) : c in "
        "context}) : a in actual answer})`. A low score means at least one sentence has no support in the "
        "context: the model added it (hallucination) or retrieval missed its source. Every sentence's score and "
        "closest context sentence are in `actual_output_meta`; the row's least grounded sentence is in its "
        "details, and for each model below the threshold an insight quotes its least grounded sentence. An "
        "answer with no sentence holding a letter or digit has an empty embedding: the row is not scored and a "
        "problem lists such rows. Sentences come from the run's Punkt splitter, with line breaks as sentence "
        "ends and over-long unpunctuated runs cut every `max_sentence_words` words (both parameters). "
        + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    parameters: ClassVar[tuple[Param, ...]] = (EMBEDDING_MODEL, *SENTENCE_PARAMETERS)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "groundedness",
            "Groundedness",
            "Lowest, over the actual answer's sentences, of the cosine similarity to the closest retrieved context "
            "sentence: whether the answer states only what the context supports.",
            threshold=0.75,
            is_primary=True,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (minilm_for("BAAI/bge-small-en"),)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        split = []
        for row in rows:
            context = [(chunk, sentence) for chunk, text in enumerate(row.context) for sentence in self.sentences(text)]
            split.append((self.sentences(row.actual_output), context))
        vectors = self.embed_batch(text for answer, context in split if answer
                                   for text in (*answer, *(sentence for _, sentence in context)))
        return [self._score(answer, context, vectors) for answer, context in split]

    def _score(self, answer, context, vectors) -> RowResult:
        if not answer:
            return RowResult({"groundedness": None}, details={"empty_embedding": True}, error_message=EMPTY_EMBEDDING)
        if not context:  # chunks without a letter or digit support nothing
            scores, closest = [0.0] * len(answer), [None] * len(answer)
        else:
            matrix = similarities(vectors.of(answer), vectors.of(sentence for _, sentence in context))
            best = matrix.argmax(axis=1)
            scores = matrix[range(len(best)), best].tolist()
            closest = [context[int(b)] for b in best]
        weakest = min(range(len(answer)), key=scores.__getitem__)
        data = [{"text": sentence, "metrics": {"groundedness": score},
                 "meta": {"closest_context_sentence": found[1], "context_chunk": found[0]} if found else {}}
                for sentence, score, found in zip(answer, scores, closest)]
        return RowResult(
            {"groundedness": scores[weakest]},
            details={"least_grounded_sentence": answer[weakest],
                     "closest_context_sentence": closest[weakest][1] if closest[weakest] else ""},
            actual_output_meta=[{"tokenization": SENTENCE_LEVEL, "data": data}],
        )

    def extra_problems(self, scored: Sequence[tuple[Row, RowResult]]) -> list[dict[str, Any]]:
        """One problem per model with answers too small to embed (the catalogue's empty-embedding problem)."""
        empty: dict[str, list[Row]] = {}
        for row, result in scored:
            if result.details.get("empty_embedding"):
                empty.setdefault(row.model_key, []).append(row)
        return [
            {
                "description": f"Model {model}: {len(rows)} actual answer(s) hold no sentence with words, so their "
                               f"embedding is empty and groundedness could not be computed: "
                               f"{', '.join(r.test_case_key for r in rows[:10])}" + (" ..." if len(rows) > 10 else ""),
                "severity": "MEDIUM",
                "problem_type": "accuracy",
                "actions_description": "Check why the model returned an empty or symbol-only answer (a refusal, a "
                                       "timeout, a broken output parser).",
                "problem_attrs": {"model_name": model,
                                  "dataset_row_keys": [[r.test_case_key, r.model_key] for r in rows],
                                  "test_case_keys": [r.test_case_key for r in rows]},
            }
            for model, rows in sorted(empty.items())
        ]

    def extra_insights(self, scored: Sequence[tuple[Row, RowResult]],
                       thresholds: dict[str, float]) -> list[dict[str, Any]]:
        """For each model with rows below the threshold, its least grounded actual answer sentence."""
        threshold = thresholds.get("groundedness", self.metric("groundedness").threshold)
        weakest: dict[str, tuple[float, str, Row, RowResult]] = {}
        for row, result in scored:
            score = result.values.get("groundedness")
            if score is None or score >= threshold:
                continue
            key = (score, row.test_case_key)
            if row.model_key not in weakest or key < weakest[row.model_key][:2]:
                weakest[row.model_key] = (score, row.test_case_key, row, result)
        insights = []
        for model, (score, case, row, result) in sorted(weakest.items()):
            sentence = result.details["least_grounded_sentence"]
            support = result.details["closest_context_sentence"]
            insights.append({
                "insight_type": "weak-point",
                "description": f"The least grounded answer sentence of {model} is \"{_quote(sentence)}\" (test case "
                               f"{case}, groundedness {score:.4f}); its closest context sentence is "
                               f"\"{_quote(support)}\".",
                "actions_description": "Check whether the retrieved context supports this sentence: if it does not, "
                                       "the model added it (ground the prompt more strictly) or retrieval missed "
                                       "its source.",
                "insight_attrs": {"model_name": model, "test_case_key": case, "metric_id": "groundedness",
                                  "metric_threshold": threshold, "groundedness": score, "sentence": sentence,
                                  "closest_context_sentence": support},
            })
        return insights
