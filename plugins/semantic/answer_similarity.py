"""Answer Semantic Similarity: cosine similarity of the actual answer's and the expected answer's embeddings."""

from __future__ import annotations

from typing import ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, Metric, Row, RowResult
from sonar_plugins.catalogue_differences import NO_JUDGE_KEY, minilm_for

from .base import MODEL_NOTE, SemanticEvaluator
from .sentences import has_words
from .vectors import pair_similarities

__all__ = ["AnswerSemanticSimilarityEvaluator"]

#: Why an answer with no letter or digit scores 0 (written as the row's error message).
NO_WORDS = "the actual answer has no words to compare"


class AnswerSemanticSimilarityEvaluator(SemanticEvaluator):
    """``answer_similarity`` in [0, 1] per row: 1 when both answers embed alike."""

    id = "answer_semantic_similarity"
    display_name: ClassVar[str] = "Answer Semantic Similarity"
    tagline: ClassVar[str] = "How close in meaning the actual answer is to the expected answer (embeddings)."
    description: ClassVar[str] = (
        "Answer Semantic Similarity embeds the actual answer and the expected answer (ground truth), each as "
        "one text, and scores their cosine similarity: "
        "`answer similarity = cosine(emb(expected answer), emb(actual answer))` (the RAGAs metric; "
        "see also \"Semantic Answer Similarity for Evaluating Question Answering Models\", 2021). "
        "An actual answer with no letter or digit (empty, \"...\") scores 0. " + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "answer_similarity",
            "Answer similarity",
            "Cosine similarity of the embeddings of the actual answer and the expected answer; higher means the "
            "answer says more nearly what the ground truth says.",
            threshold=0.75,
            is_primary=True,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (minilm_for("BAAI/bge-small-en-v1.5"), NO_JUDGE_KEY)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        texts = [(row.expected_output.strip(), row.actual_output.strip()) for row in rows]
        scored = [i for i, (_, actual) in enumerate(texts) if has_words(actual)]
        vectors = self.embed_batch(text for i in scored for text in texts[i])
        scores = dict(zip(scored, pair_similarities(vectors.of(texts[i][0] for i in scored),
                                                    vectors.of(texts[i][1] for i in scored)).tolist()))
        return [RowResult({"answer_similarity": scores[i]}) if i in scores
                else RowResult({"answer_similarity": 0.0}, error_message=NO_WORDS) for i in range(len(rows))]
