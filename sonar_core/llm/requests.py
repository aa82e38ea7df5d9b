"""What the LLM client is asked and answers: requests, completions, counters and journal event names.

Plain data, shared by :mod:`.client` (which fills them) and everything that builds requests or reads
completions (judges, hosts, the ragas adapter).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from ..jsontypes import JsonObject

__all__ = ["ChatMessage", "CallTags", "CallParams", "CallRecord", "LabelFields", "ClientCounts", "LLMRequest",
           "Completion", "ClientStats", "ClientEvents", "ANNOTATOR_EVENTS", "SUT_EVENTS", "decode_entry",
           "label_fields"]


@dataclass(frozen=True)
class ClientEvents:
    """The journal's names for one client's events: who is asked decides the words."""

    cls: str
    who: str  # the field that names the configuration (``annotator``); "" for none
    cache_kind: str  # who asked, in the response cache's counts (``annotator``, ``sut``)
    fetched: str
    cached: str
    retrying: str
    failed: str
    #: A request answered by an identical request's call already in flight (single-flight).
    shared: str = ""


#: Judges (ModelBench's annotators).
ANNOTATOR_EVENTS = ClientEvents("LLMClient", "annotator", "annotator", "fetched annotator response",
                                "using cached annotator response", "retrying annotator request",
                                "annotator request failed", "using in-flight annotator response")
#: Models under test (ModelBench's SUTs); the item fields (test case, model key) come with the tags.
SUT_EVENTS = ClientEvents("HostWorker", "", "sut", "fetched sut response", "using cached sut response",
                          "retrying sut request", "sut request failed", "using in-flight sut response")


class ChatMessage(TypedDict):
    """An OpenAI chat message: a conversation's turn as a host or judge is sent it (``content`` None on an
    assistant message that only calls tools; ``tool_calls`` in OpenAI's shape)."""
    role: str
    content: str | None
    tool_calls: NotRequired[list[JsonObject]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class CallTags(TypedDict, total=False):
    """A request's item fields for the journal and the cost ledger (which fields depend on who asks)."""
    evaluator: str  #: the evaluator (its label) whose judge is asked: the ledger's attribution
    test_case_key: str
    model_key: str
    epoch: int  #: only where it is not 0
    role: str  #: "simulated user" for a simulated user's turn
    purpose: str  #: "check" for ``sonar judges --check``


class CallParams(TypedDict):
    """The sampling of one call: part of the cache key and of the journal's request record."""
    temperature: float
    max_tokens: int
    labels: NotRequired[list[str]]  #: a labelled request's allowed answers


class CallRecord(CallParams):
    """The request as the journal and the cache keep it (no secret: none is in a request)."""
    model: str
    messages: list[dict[str, str]]
    repeat: int


class LabelFields(TypedDict, total=False):
    """The journal's fields of a labelled answer."""
    confidence: float | None


class ConcurrencyRange(TypedDict):
    min: int | None
    max: int | None


class ClientCounts(TypedDict):
    """One client's counters as run.json shows them (the optional ones only where they happened)."""
    requests: int
    cached: int
    fetched: int
    failed: int
    retries: int
    call_seconds: float
    cleaned_text: NotRequired[int]
    shared_calls: NotRequired[int]
    concurrency_limit: NotRequired[ConcurrencyRange]
    input_tokens: NotRequired[int]
    output_tokens: NotRequired[int]
    call_cost: NotRequired[float]


@dataclass
class LLMRequest:
    """One question to an LLM.

    Attributes:
        messages: chat messages (``{"role": ..., "content": ...}``).
        repeat: which of N repeated askings this is (part of the cache key).
        max_tokens: a lower cap than the configuration's for this request, or None.
        tags: item fields for the journal (``evaluator``, ``test_case_key``, ``model_key``).
        labels: the answers allowed (a judge's verdict labels), or None for free text.
    """

    messages: list[dict[str, str]]
    repeat: int = 0
    max_tokens: int | None = None
    tags: CallTags = field(default_factory=CallTags)
    labels: tuple[str, ...] | None = None


@dataclass
class Completion:
    """The outcome of one request: ``text`` when answered, ``error`` when every attempt failed."""

    text: str | None
    cached: bool = False
    error: str | None = None
    attempts: int = 0
    seconds: float = 0.0
    key: str = ""
    #: What the backend said besides the text (token usage, retrieved contexts); from the cache
    #: too when the client keeps envelopes.
    meta: JsonObject = field(default_factory=dict)
    #: True when the answer held text no UTF-8 file can hold, replaced with U+FFFD (docs/reliability.md).
    cleaned: bool = False
    #: True when a call already in flight for the same request answered this one (single-flight).
    shared: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def confidence(self) -> float | None:
        """For a labelled request answered with probabilities: the chosen label's probability among the
        labels; None when only text was available."""
        value = self.meta.get("confidence")
        return float(value) if isinstance(value, (int, float)) else None


@dataclass
class ClientStats:
    """Counters of one client over a run (run.json)."""

    requests: int = 0
    cached: int = 0
    fetched: int = 0
    failed: int = 0
    retries: int = 0
    seconds: float = 0.0
    #: Answers whose text was cleaned (lone surrogates replaced; docs/reliability.md).
    cleaned: int = 0
    #: Requests answered by an identical request's call already in flight (single-flight).
    shared: int = 0
    #: The lowest and highest in-flight limit used, once adaptive concurrency changed it (None: never
    #: changed; docs/concurrency.md). Merged as a minimum and a maximum, not added (:meth:`add`).
    limit_low: int | None = None
    limit_high: int | None = None

    def add(self, name: str, value: Any) -> None:
        """Add ``value`` to counter ``name`` (the limit range: keep the lower or higher)."""
        old = getattr(self, name)
        if name in ("limit_low", "limit_high"):
            if value is not None:
                setattr(self, name, value if old is None else (min if name == "limit_low" else max)(old, value))
        else:
            setattr(self, name, old + value)
    #: Tokens of the answered calls (the endpoint's usage, or a local model's tokenizer; docs/costs.md).
    input_tokens: int = 0
    output_tokens: int = 0
    #: USD of the answered calls at the run's price for this key (a number, so that a Ray worker's counters
    #: add up in the driver); reported only when not 0.
    cost: float = 0.0

    def as_dict(self) -> ClientCounts:
        counts: ClientCounts = {"requests": self.requests, "cached": self.cached, "fetched": self.fetched,
                                "failed": self.failed, "retries": self.retries, "call_seconds": round(self.seconds, 3)}
        # Only when they happened: run.json of a run without them stays as it was.
        if self.cleaned:
            counts["cleaned_text"] = self.cleaned
        if self.shared:
            counts["shared_calls"] = self.shared
        if self.limit_low is not None:
            counts["concurrency_limit"] = {"min": self.limit_low, "max": self.limit_high}
        # Tokens only when some were reported, the cost only under a price: older shapes stay as they were.
        if self.input_tokens:
            counts["input_tokens"] = self.input_tokens
        if self.output_tokens:
            counts["output_tokens"] = self.output_tokens
        if self.cost:
            counts["call_cost"] = round(self.cost, 6)
        return counts


def decode_entry(stored: str, envelope: bool, labelled: bool) -> tuple[str, JsonObject, float, Any]:
    """text, meta, original seconds and the journal's response, from a cache entry (an envelope when
    the client keeps envelopes or the request was labelled)."""
    if not (envelope or labelled):
        return stored, {}, 0.0, stored
    try:
        payload = json.loads(stored)
        text, meta = str(payload["text"]), dict(payload.get("meta") or {})
    except (ValueError, KeyError, TypeError):
        return stored, {}, 0.0, stored  # an entry written without an envelope
    response = {"text": text, "meta": meta} if envelope else text
    return text, meta, float(payload.get("seconds") or 0.0), response


def label_fields(request: LLMRequest, meta: JsonObject) -> LabelFields:
    """The journal's fields of a labelled answer: its confidence (None when read from text)."""
    return {"confidence": meta.get("confidence")} if request.labels else {}
