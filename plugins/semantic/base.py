"""What the six semantic evaluators share: the embedding model parameter, cached sentence
splitting and one embedding request per batch of rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterable

from sonar_core import Evaluator, Param

from .sentences import cached_split
from .vectors import TextVectors

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["SemanticEvaluator", "EMBEDDING_MODEL", "MODEL_NOTE"]

EMBEDDING_MODEL = Param(
    "embedding_model",
    str,
    "all-MiniLM-L6-v2",
    "Sentence-transformers model: a name Sonar knows (all-MiniLM-L6-v2, embedded), a local model folder, "
    "or a Hugging Face id already in the local cache (e.g. BAAI/bge-small-en-v1.5, the catalogue's default). "
    "Nothing is downloaded; a missing model stops the run before any row is scored.",
)
#: The sentence every description ends with: where the vectors come from.
MODEL_NOTE = (
    "Embeddings come from the run's embedding service (`embedding_model`, default all-MiniLM-L6-v2; the "
    "catalogue's BAAI/bge-small-en-v1.5 is a configuration away): each unique text is encoded once per run "
    "and shared with the other semantic evaluators. Vectors are L2-normalised, so a similarity is their dot "
    "product (the cosine); a negative cosine counts as 0, so scores lie in [0, 1]. A text longer than the "
    "model's input limit (256 word pieces for MiniLM) is truncated by the model."
)


class SemanticEvaluator(Evaluator):
    """Base of the embedding evaluators: ``embed_batch`` and ``sentences`` for subclasses."""

    parameters: ClassVar[tuple[Param, ...]] = (EMBEDDING_MODEL,)
    model_params: ClassVar[dict[str, str]] = {"embedding_model": "embedding"}
    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'sentence_transformers')

    def sentences(self, text: str) -> tuple[str, ...]:
        """The sentences of ``text`` (see sentences.py), cached by text for the process."""
        # Only evaluators that declare the sentence parameters (sentences.SENTENCE_PARAMETERS) split.
        return cached_split(text, self.ctx.split_sentences, split_on_newlines=self.params["split_on_newlines"],
                            max_words=self.params["max_sentence_words"])

    def embed_batch(self, texts: Iterable[str]) -> TextVectors:
        """Vectors of every text a batch needs, from one ``ctx.embed`` request for the unique ones."""
        import numpy as np

        # Shortest first: the service encodes a long request in chunks, and chunks of like lengths
        # pad least (one encode call already sorts its own texts by length).
        unique = sorted(dict.fromkeys(texts), key=len)
        if not unique:
            return TextVectors([], np.zeros((0, 0), dtype=np.float32))
        return TextVectors(unique, self.ctx.embed(unique, self.params["embedding_model"]))
