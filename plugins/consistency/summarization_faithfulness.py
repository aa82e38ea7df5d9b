"""Summarization (Completeness and Faithfulness): SummaC ZS and Conv faithfulness, geometric completeness.

The question is the text to summarise and the actual answer is the summary. Both are split into
sentences (SummaC keeps sentences longer than 10 characters). Faithfulness comes from an NLI model
(SummaC ZS and Conv, :mod:`.summac`); completeness from sentence embeddings of the run's
embedding service (:mod:`.completeness`).
"""

from __future__ import annotations

from typing import ClassVar, Iterable, Sequence

from sonar_core import Difference, Evaluator, Input, Metric, Param, Row, RowResult, load_sequence_classifier
from sonar_plugins.catalogue_differences import minilm_for

from .completeness import completeness, reduce
from .loaders import load_summac_conv
from .summac import nli_image, summac_conv, summac_zs

__all__ = ["SummarizationFaithfulnessEvaluator"]

_MIN_SENTENCE_CHARS = 10  # SummaC's own filter
_MAX_DOCUMENT_SENTENCES = 100  # SummaC's max_doc_sents


class SummarizationFaithfulnessEvaluator(Evaluator):
    """Completeness (primary), SummaC Conv and SummaC ZS of each summary against the text it summarises."""

    id = "summarization_completeness_faithfulness"
    display_name: ClassVar[str] = "Summarization (Completeness and Faithfulness)"
    tagline: ClassVar[str] = "Whether a summary covers its text (embeddings) and stays faithful to it (NLI)."
    description: ClassVar[str] = (
        "No reference summary is needed: the question is the text and the actual answer its summary. "
        "**Faithfulness** uses an NLI model on every (text sentence, summary sentence) pair (by default SummaC's "
        "'vitc' model, tals/albert-xlarge-vitaminc-mnli). *SummaC ZS* averages, over the summary sentences, the "
        "highest entailment minus the highest contradiction (range -1 to 1); *SummaC Conv* turns each summary "
        "sentence's entailment probabilities into a histogram and scores it with SummaC's trained weights "
        "(range 0 to 1). **Completeness** embeds the sentences with the run's embedding model, reduces them with "
        "UMAP fitted on the text's sentences, snaps each summary sentence to its nearest text sentence when it "
        "is close enough (dropping it otherwise) and compares the spread (three segment distance) of the kept "
        "points with that of the text. The NLI model and the Conv weights are not on the package registry: "
        "without them the evaluator says which is missing and does not run."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.ACTUAL_ANSWER)
    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'transformers', 'sentence_transformers', 'umap')
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("nli_model", str, "tals/albert-xlarge-vitaminc-mnli",
              "NLI classifier for SummaC: a Hugging Face id in the local cache or a local folder; its labels must "
              "name entailment (or SUPPORTS) and contradiction (or REFUTES)."),
        Param("summac_conv_model", str, "summac-conv-vitc",
              "SummaC Conv's trained weights: 'summac-conv-vitc' (summac_conv_vitc_sent_perc_e.bin in the store) "
              "or the path of such a file."),
        Param("embedding_model", str, "all-MiniLM-L6-v2",
              "Sentence embedding model for completeness (the catalogue uses BAAI/bge-small-en-v1.5)."),
    )
    # The embedding model is checked by the embedding service on first use (the default is embedded).
    model_params: ClassVar[dict[str, str]] = {"nli_model": "classifier", "summac_conv_model": "summac_conv"}
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("completeness", "Completeness",
               "Spread of the summary's grounded sentences over the spread of the text's sentences, in UMAP space.",
               threshold=0.75, is_primary=True),
        Metric("faithfulness_summac_conv", "Faithfulness (SummaC Conv)",
               "SummaC Conv: trained aggregation of each summary sentence's entailment histogram.", threshold=0.75),
        Metric("faithfulness_summac_zs", "Faithfulness (SummaC ZS)",
               "SummaC ZS: mean over summary sentences of max entailment minus max contradiction.",
               value_range=(-1.0, 1.0), threshold=0.75),
    )
    category: ClassVar[str] = "Summarization"
    differences: ClassVar[tuple[Difference, ...]] = (
        minilm_for("BAAI/bge-small-en-v1.5", "completeness embeddings"),
        Difference(
            what="Faithfulness (SummaC ZS) range: catalogue [0, 1], Sonar [-1, 1]",
            why="SummaC ZS is max entailment minus max contradiction per sentence, as in the SummaC paper, "
                "which is negative for a contradicted summary",
            action="read a negative value as a summary its text contradicts; clip at 0 to compare with H2O "
                   "Sonar's numbers",
            field="metric:faithfulness_summac_zs",
        ),
    )

    def _sentences(self, text: str) -> list[str]:
        kept = [s for s in self.ctx.split_sentences(text) if len(s) > _MIN_SENTENCE_CHARS]
        return kept or ([text.strip()] if text.strip() else [])

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        model, tokenizer = self.ctx.load_model(load_sequence_classifier, self.params["nli_model"])
        weights = self.ctx.load_model(load_summac_conv, self.params["summac_conv_model"])
        results = []
        for row in rows:
            document = self._sentences(row.input)[:_MAX_DOCUMENT_SENTENCES]
            summary = self._sentences(row.actual_output)
            image = nli_image(model, tokenizer, document, summary)
            vectors = self.ctx.embed(document + summary, model=self.params["embedding_model"])
            context_points, summary_points = reduce(vectors[:len(document)], vectors[len(document):])
            results.append(RowResult(
                values={"completeness": completeness(context_points, summary_points),
                        "faithfulness_summac_conv": summac_conv(image, weights),
                        "faithfulness_summac_zs": summac_zs(image)},
                details={"text_sentences": len(document), "summary_sentences": len(summary)}))
        return results
