"""Answer Semantic Sentence Similarity: each actual answer sentence against its closest expected answer sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, Metric, Param, Row, RowResult
from sonar_plugins.catalogue_differences import minilm_for

from .base import EMBEDDING_MODEL, MODEL_NOTE, SemanticEvaluator
from .sentences import SENTENCE_LEVEL, SENTENCE_PARAMETERS
from .vectors import similarities

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["AnswerSemanticSentenceSimilarityEvaluator", "sentence_scores"]

NO_SENTENCES = "the {} has no sentence with words to compare"


def sentence_scores(answer, expected):
    """For each answer sentence vector: (best similarity to an expected sentence, that sentence's index)."""
    matrix = similarities(answer, expected)
    best = matrix.argmax(axis=1)
    return matrix[range(len(best)), best], best


class AnswerSemanticSentenceSimilarityEvaluator(SemanticEvaluator):
    """``mean_answer_similarity`` and ``min_answer_similarity`` in [0, 1] per row."""

    id = "answer_semantic_sentence_similarity"
    display_name: ClassVar[str] = "Answer Semantic Sentence Similarity"
    tagline: ClassVar[str] = "How close in meaning each sentence of the answer is to the expected answer's sentences."
    description: ClassVar[str] = (
        "Answer Semantic Sentence Similarity splits the actual answer and the expected answer (ground truth) into "
        "sentences and gives each actual answer sentence `a` the similarity of its closest expected answer "
        "sentence: `answer similarity(a) = max({cosine(emb(a), emb(e)) : e in expected answer})`. The row's "
        "**mean answer similarity** is the mean and its **min answer similarity** the minimum of these "
        "per-sentence scores; the minimum points at the one sentence furthest from the ground truth. Each "
        "sentence's score and its closest expected sentence are in `actual_output_meta`. Sentences come from the "
        "run's Punkt splitter, with line breaks as sentence ends and over-long unpunctuated runs cut every "
        "`max_sentence_words` words (both parameters); an answer (or expected answer) with no sentence holding a "
        "letter or digit scores 0. " + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (EMBEDDING_MODEL, *SENTENCE_PARAMETERS)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "mean_answer_similarity",
            "Mean answer similarity",
            "Mean over the actual answer's sentences of the cosine similarity to the closest expected answer sentence.",
            threshold=0.75,
            is_primary=True,
        ),
        Metric(
            "min_answer_similarity",
            "Min answer similarity",
            "Minimum over the actual answer's sentences of the cosine similarity to the closest expected answer "
            "sentence: the answer's least supported sentence.",
            threshold=0.75,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (minilm_for("BAAI/bge-small-en-v1.5"),)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        split = [(self.sentences(row.actual_output), self.sentences(row.expected_output)) for row in rows]
        vectors = self.embed_batch(s for answer, expected in split if answer and expected for s in answer + expected)
        return [self._score(answer, expected, vectors) for answer, expected in split]

    def _score(self, answer, expected, vectors) -> RowResult:
        import numpy as np

        if not answer or not expected:
            missing = "actual answer" if not answer else "expected answer"
            return RowResult({"mean_answer_similarity": 0.0, "min_answer_similarity": 0.0},
                             error_message=NO_SENTENCES.format(missing))
        scores, closest = sentence_scores(vectors.of(answer), vectors.of(expected))
        weakest = int(scores.argmin())
        data = [{"text": sentence, "metrics": {"answer_similarity": float(score)},
                 "meta": {"closest_expected_sentence": expected[int(c)]}}
                for sentence, score, c in zip(answer, scores, closest)]
        return RowResult(
            {"mean_answer_similarity": float(scores.mean(dtype=np.float64)),
             "min_answer_similarity": float(scores[weakest])},
            details={"least_similar_sentence": answer[weakest]},
            actual_output_meta=[{"tokenization": SENTENCE_LEVEL, "data": data}],
        )
