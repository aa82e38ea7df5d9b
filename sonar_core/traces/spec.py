"""``traces:`` in a run configuration: which span files to read and how spans become rows.

A ground module (the configuration validates it): docs/traces.md describes every key. Example::

    traces:
      files: [spans/]            # OTLP JSON lines (.jsonl/.json), OTLP protobuf (.pb/.binpb), .gz of either
      scope: trace               # span | trace | session
      span_kinds: [LLM]          # span scope: the kinds that become rows (default LLM)
      span_names: ["chat *"]     # shell patterns on the span name
      attributes: {deployment.environment: prod}
      sample_rate: 0.1           # keep a tenth, chosen by a hash of the id and the seed
      seed: 7
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["TraceInput", "SCOPES", "SPAN_KINDS", "DEFAULT_SPAN_KINDS", "trace_setting"]

#: The row scopes: one LLM call, one trace, one session (every trace of a conversation).
SCOPES = ("span", "trace", "session")
#: Span kinds, in OpenInference's names; OpenTelemetry GenAI operations map onto them (docs/traces.md).
SPAN_KINDS = ("LLM", "EMBEDDING", "CHAIN", "RETRIEVER", "RERANKER", "TOOL", "AGENT", "GUARDRAIL", "EVALUATOR",
              "PROMPT")
#: At span scope without ``span_kinds``, only LLM calls become rows.
DEFAULT_SPAN_KINDS = ("LLM",)


class TraceInput(BaseModel):
    """Production traces as the run's input, instead of a dataset or a test suite."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: Span files or folders (a folder: every .jsonl/.json/.pb/.binpb file in it, and their .gz, by name).
    files: list[str] = Field(min_length=1)
    #: ``span`` (a row per LLM call), ``trace`` (a row per trace) or ``session`` (a row per session).
    scope: Literal["span", "trace", "session"] = "trace"
    #: Span kinds (LLM, RETRIEVER, TOOL, AGENT, CHAIN, ...). Span scope: the kinds that become rows (default
    #: LLM); trace and session scope: keep the traces (sessions) with a span of one of these kinds.
    span_kinds: list[str] = Field(default_factory=list)
    #: Shell patterns (``chat *``) on span names, filtering as ``span_kinds`` does.
    span_names: list[str] = Field(default_factory=list)
    #: Attribute key -> value (compared as text): a span matches when it has every one.
    attributes: dict[str, str] = Field(default_factory=dict)
    #: The share of rows kept, chosen by a hash of the row's id (span, trace or session id) and ``seed``.
    sample_rate: float = Field(default=1.0, gt=0, le=1)
    seed: int = 0
    #: Where a row's model key comes from: ``model`` (the LLM's requested model, else its response model,
    #: else the service name) or ``service`` (the resource's ``service.name``).
    model_key: Literal["model", "service"] = "model"
    #: A span with a text attribute longer than this many characters is skipped (and counted).
    max_attribute_chars: int = Field(default=1_000_000, ge=1_000)
    #: Processes that decode and map spans beside the run's own: ``auto`` (two, when the span files hold 64 MiB
    #: or more and the run may use two CPUs or more; else none), or a count (1: none; docs/traces.md). Rows and
    #: counts are the same either way.
    workers: int | Literal["auto"] = "auto"

    @field_validator("workers", mode="before")
    @classmethod
    def _auto_workers(cls, workers: Any) -> Any:
        if workers is None or workers == "auto":  # None: a run.json written before ``auto`` (then the default)
            return "auto"
        try:
            count = int(workers) if not isinstance(workers, (bool, float)) else 0
        except (TypeError, ValueError):
            count = 0
        if not 1 <= count <= 64:
            raise ValueError(f"use auto or a number of processes from 1 to 64, not {str(workers)[:20]!r}")
        return count

    @field_validator("span_kinds")
    @classmethod
    def _known_kinds(cls, kinds: list[str]) -> list[str]:
        upper = [kind.upper() for kind in kinds]
        unknown = [kind for kind in upper if kind not in SPAN_KINDS]
        if unknown:
            raise ValueError(f"unknown span kind '{unknown[0]}' (use {', '.join(SPAN_KINDS)})")
        return upper

    def row_kinds(self) -> frozenset[str]:
        """The kinds that become rows at span scope."""
        return frozenset(self.span_kinds or DEFAULT_SPAN_KINDS)


def trace_setting(value: Any) -> Any:
    """The API's ``traces=`` as the configuration holds it: a path or a list of paths means ``{"files": [...]}``;
    a TraceInput its keys; a mapping as it is (validated with the configuration)."""
    if isinstance(value, TraceInput):
        return value.model_dump()
    if isinstance(value, (str, Path)):
        return {"files": [str(value)]}
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, Path)) for v in value):
        return {"files": [str(v) for v in value]}
    return dict(value) if hasattr(value, "keys") else value
