"""Context Relevancy (Soft Recall and Precision): how close in meaning each retrieved chunk is to the question."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, Metric, Param, Row, RowResult
from sonar_plugins.catalogue_differences import NO_JUDGE_KEY, minilm_for

from .base import EMBEDDING_MODEL, MODEL_NOTE, SemanticEvaluator
from .sentences import SENTENCE_PARAMETERS
from .vectors import similarities

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["ContextRelevancySoftRecallPrecisionEvaluator"]

NO_SENTENCES = "no retrieved context chunk has a sentence with words to compare"


class ContextRelevancySoftRecallPrecisionEvaluator(SemanticEvaluator):
    """``recall_relevancy`` (best chunk) and ``precision_relevancy`` (mean chunk), each in [0, 1] per row."""

    id = "context_relevancy_soft_recall_precision"
    display_name: ClassVar[str] = "Context Relevancy (Soft Recall and Precision)"
    tagline: ClassVar[str] = "Whether the retrieved chunks are about the question: the best chunk and the average one."
    description: ClassVar[str] = (
        "Context Relevancy (Soft Recall and Precision) scores the retriever. Each retrieved context chunk `ch` gets "
        "the similarity of its sentence closest to the question: `chunk relevancy(ch) = max({cosine(emb(q), "
        "emb(s)) : s in ch})`. **Recall relevancy** is the best chunk's relevancy (did retrieval find anything "
        "about the question?) and **precision relevancy** the mean over the chunks (how much of what was "
        "retrieved is about it). Chunks with no sentence holding a letter or digit are left out; each chunk's "
        "relevancy is in the row's details (`chunk_relevancy`, in chunk order, null for a left-out chunk). "
        "Recall relevancy is the primary metric (the catalogue lists it first and marks none). Sentences come "
        "from the run's Punkt splitter, with line breaks as sentence ends and over-long unpunctuated runs cut "
        "every `max_sentence_words` words (both parameters). " + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.RETRIEVED_CONTEXT)
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    parameters: ClassVar[tuple[Param, ...]] = (EMBEDDING_MODEL, *SENTENCE_PARAMETERS)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "recall_relevancy",
            "Recall relevancy",
            "Relevancy of the best retrieved chunk: the highest cosine similarity between the question and a "
            "context sentence.",
            threshold=0.75,
            is_primary=True,
        ),
        Metric(
            "precision_relevancy",
            "Precision relevancy",
            "Mean relevancy of the retrieved chunks, a chunk's relevancy being the highest cosine similarity "
            "between the question and one of its sentences.",
            threshold=0.75,
        ),
    )
    category: ClassVar[str] = "Retrieval"
    differences: ClassVar[tuple[Difference, ...]] = (minilm_for("BAAI/bge-small-en"), NO_JUDGE_KEY)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        split = [(row.input.strip(), [self.sentences(chunk) for chunk in row.context]) for row in rows]
        vectors = self.embed_batch(text for question, chunks in split if any(chunks)
                                   for text in (question, *(s for chunk in chunks for s in chunk)))
        return [self._score(question, chunks, vectors) for question, chunks in split]

    def _score(self, question, chunks, vectors) -> RowResult:
        import numpy as np

        if not any(chunks):
            return RowResult({"recall_relevancy": 0.0, "precision_relevancy": 0.0}, error_message=NO_SENTENCES)
        sentences = [s for chunk in chunks for s in chunk]
        scores = similarities(vectors.of([question]), vectors.of(sentences))[0]
        # One reduceat over the flat sentence scores gives every non-empty chunk's maximum.
        sizes = [len(chunk) for chunk in chunks if chunk]
        per_chunk = np.maximum.reduceat(scores, np.cumsum([0, *sizes[:-1]])).tolist()
        found = iter(per_chunk)
        return RowResult(
            {"recall_relevancy": max(per_chunk), "precision_relevancy": math.fsum(per_chunk) / len(per_chunk)},
            details={"chunk_relevancy": [next(found) if chunk else None for chunk in chunks]},
        )
