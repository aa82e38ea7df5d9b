"""Answer Relevancy (Sentence Similarity): the answer sentence closest in meaning to the question."""

from __future__ import annotations

from typing import ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, Metric, Param, Row, RowResult
from sonar_plugins.catalogue_differences import minilm_for

from .base import EMBEDDING_MODEL, MODEL_NOTE, SemanticEvaluator
from .sentences import SENTENCE_LEVEL, SENTENCE_PARAMETERS
from .vectors import similarities

__all__ = ["AnswerRelevancySentenceSimilarityEvaluator"]

NO_SENTENCES = "the actual answer has no sentence with words to compare"


class AnswerRelevancySentenceSimilarityEvaluator(SemanticEvaluator):
    """``answer_relevancy`` in [0, 1] per row: the best question-to-sentence similarity."""

    id = "answer_relevancy_sentence_similarity"
    display_name: ClassVar[str] = "Answer Relevancy (Sentence Similarity)"
    tagline: ClassVar[str] = ("Whether a sentence of the answer is about what the question asks "
                               "(embeddings, no judge).")
    description: ClassVar[str] = (
        "Answer Relevancy (Sentence Similarity) embeds the question and each sentence of the actual answer and "
        "takes the highest similarity: `answer relevancy = max({cosine(emb(question), emb(a)) : a in actual "
        "answer})`. One sentence that addresses the question is enough for a high score; every sentence's "
        "similarity to the question is in `actual_output_meta`. Sentences come from the run's Punkt splitter, "
        "with line breaks as sentence ends and over-long unpunctuated runs cut every `max_sentence_words` words "
        "(both parameters); an answer with no sentence holding a letter or digit scores 0. " + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (EMBEDDING_MODEL, *SENTENCE_PARAMETERS)
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "answer_relevancy",
            "Answer relevancy",
            "Highest cosine similarity between the question and a sentence of the actual answer.",
            threshold=0.75,
            is_primary=True,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (minilm_for("BAAI/bge-small-en"),)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        split = [(row.input.strip(), self.sentences(row.actual_output)) for row in rows]
        vectors = self.embed_batch(text for question, answer in split if answer for text in (question, *answer))
        return [self._score(question, answer, vectors) for question, answer in split]

    def _score(self, question, answer, vectors) -> RowResult:
        if not answer:
            return RowResult({"answer_relevancy": 0.0}, error_message=NO_SENTENCES)
        scores = similarities(vectors.of([question]), vectors.of(answer))[0]
        best = int(scores.argmax())
        data = [{"text": sentence, "metrics": {"answer_relevancy": float(score)}, "meta": {}}
                for sentence, score in zip(answer, scores)]
        return RowResult({"answer_relevancy": float(scores[best])}, details={"most_relevant_sentence": answer[best]},
                         actual_output_meta=[{"tokenization": SENTENCE_LEVEL, "data": data}])
