"""The settings of a test-set generation (``sonar generate``, ``sonar_core.generate(...)`` and the
``generate:`` section of a run configuration); docs/generate.md says what each does."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["GenerateSpec", "QUESTION_TYPES"]

QUESTION_TYPES = ("single_hop", "multi_hop", "comparison", "summary", "unanswerable")


class GenerateSpec(BaseModel):
    """What to generate from which documents, with which model, and how strict to be."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: Files and folders of documents (.txt, .md, .html, .pdf, .jsonl chunks).
    docs: list[str] = Field(min_length=1)
    #: Items to write (the plan; kept items may be fewer, the report says why).
    n: int = Field(default=20, ge=1, le=100_000)
    #: The suite file written; its folder receives the report, the graph and the journal.
    output: str = "generated/suite.jsonl"
    #: The generator model: an LLM configuration key (docs/judges.md); None: the default judge.
    judge: str | None = None
    #: The model that judges groundedness and answerability; None: the generator.
    quality_judge: str | None = None
    seed: int = 0
    spread: Literal["sources", "topics", "proportional"] = "sources"
    #: Question type -> weight (None: single_hop 4, multi_hop 2, comparison 1, summary 1, unanswerable 2).
    types: dict[str, float] | None = None
    personas: list[str] = Field(default_factory=list)
    styles: list[Literal["plain", "misspelt", "search-box", "long"]] = Field(default_factory=lambda: ["plain"])
    #: Least quality score (share of counted checks passed) an item needs to be kept.
    min_quality: float = Field(default=1.0, ge=0.0, le=1.0)
    #: Keep items below ``min_quality`` in the suite, flagged, instead of dropping them.
    keep_low_quality: bool = False
    #: Two questions at least this similar (cosine of their embeddings): the later one is a duplicate.
    max_similarity: float = Field(default=0.9, gt=0.0, le=1.0)
    #: Chunks with fewer tokens are never a question's seed (boilerplate).
    min_tokens: int = Field(default=25, ge=1)
    #: Most tokens (words and punctuation marks) in one chunk.
    chunk_tokens: int = Field(default=250, ge=20, le=5000)
    #: Items judged in one quality prompt.
    judge_batch: int = Field(default=8, ge=1, le=32)
    #: Replies read per item at most (the first ask and the re-asks of an unreadable reply).
    max_attempts: int = Field(default=5, ge=1, le=10)
    #: Measure the quality judge on its calibration sets first (cached).
    calibrate: bool = True
    #: Largest document read, in MB.
    max_file_mb: float = Field(default=50.0, gt=0)
    llm_configs: str | None = None
    llm_cache: str | None = None
    no_cache: bool = False
    #: LLM configuration key -> {input_per_1k, output_per_1k} USD (docs/costs.md).
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    max_cost: float | None = Field(default=None, gt=0)
    device: str = "auto"
    #: Who embeds the document graph's chunks: ``auto`` (ONNX Runtime on the CPU when installed), ``onnx``
    #: or ``torch`` (docs/generate.md); the evaluators' embeddings are torch's whatever this says.
    embedding_backend: Literal["auto", "onnx", "torch"] = "auto"
    #: The folder relative paths are resolved from (a run configuration's).
    base_dir: str | None = None

    @field_validator("types")
    @classmethod
    def _types(cls, value):
        if value is None:
            return value
        unknown = sorted(set(value) - set(QUESTION_TYPES))
        if unknown:
            raise ValueError(f"unknown question type '{unknown[0]}' (known: {', '.join(QUESTION_TYPES)})")
        if any(w < 0 for w in value.values()) or not any(w > 0 for w in value.values()):
            raise ValueError("type weights must be 0 or more, and one of them above 0")
        return value
