"""LLM backends: one call, one answer, and a clear word on whether a retry can help.

* :class:`OpenAIChatBackend` talks to any OpenAI-compatible ``/chat/completions`` endpoint through
  the ``openai`` SDK (its own retries off: the client retries, journals and honours Retry-After);
  it can also ask for ``n`` answers to one prompt in one call.
* :class:`LocalCausalLMBackend` runs a causal LM from the model store with its chat template,
  greedy unless the configuration sets a temperature.

A backend that can see probabilities also answers *labelled* requests
(``complete_labels(messages, labels, temperature, max_tokens, seed)``): the answer is one of the
labels, and its ``meta`` holds ``confidence`` (the label's probability among the labels) and
``label_probabilities`` (see :mod:`.labels`). The local backend scores every label and never
generates; the HTTP backend asks for ``logprobs`` and says ``meta["logprobs"] = False`` when the
endpoint gives none (the answer is then its text, ``confidence`` None).

Backends raise :class:`TransientError` for what a retry may cure (timeouts, 408/409/429, 5xx,
dropped connections, a body that is not a chat completion) and :class:`PermanentError` for the
rest (401, 404, a bad request, a missing model).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from ..jsontypes import JsonObject
from .configs import LLMConfig
from .labels import choose, label_distribution, labels_from_top_tokens
from .rate_limit import retry_after_seconds

__all__ = ["Answer", "Backend", "TransientError", "PermanentError", "OpenAIChatBackend", "LocalCausalLMBackend",
           "make_backend"]

#: How much of an unreadable body an error message quotes.
_QUOTE = 200
#: Most alternatives OpenAI's API gives per token (``top_logprobs``).
TOP_LOGPROBS = 20


class TransientError(Exception):
    """A failure a retry may cure; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class PermanentError(Exception):
    """A failure that retrying cannot cure."""


@dataclass
class Answer:
    """The text of one answer, and what the backend said about it."""

    text: str
    meta: JsonObject = field(default_factory=dict)


class Backend(Protocol):
    """One call, one answer. A backend that can give several answers to one prompt in one call also
    has ``complete_choices(messages, temperature, max_tokens, seed, n) -> list[Answer]`` (at most
    ``n``; fewer when the endpoint ignores ``n``)."""

    def complete(self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
                 seed: int) -> Answer: ...

    def check(self) -> None:
        """Raise when the backend cannot work at all (no model, no key), without calling it."""

    def close(self) -> None: ...


def _answers_from_body(body: str) -> list[Answer]:
    """Every choice of a chat completion, in the order of their ``index``."""
    try:
        data = json.loads(body)
        choices = sorted(data["choices"], key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        contents = [choice["message"].get("content") for choice in choices]
        if not contents:
            raise IndexError("no choice")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise TransientError("malformed", f"malformed response body: {body[:_QUOTE]!r}") from None
    answers = []
    for number, (choice, content) in enumerate(zip(choices, contents)):
        meta: JsonObject = {"finish_reason": choice.get("finish_reason")}
        # The usage covers the whole call: it goes with the first answer only, so sums stay right.
        if number == 0 and isinstance(data.get("usage"), dict):
            meta["usage"] = data["usage"]
        # No content (a refusal, a tool call) is an empty answer: the evaluator counts it as unparseable.
        if choice["message"].get("tool_calls"):
            meta["tool_calls"] = choice["message"]["tool_calls"]  # a conversation's host reads them
        answers.append(Answer(text=content if isinstance(content, str) else "", meta=meta))
    return answers


#: Role of the entry that may open a request's messages to declare the tools the model may call
#: (hosts/chat_turns.py): the backend sends them as ``tools`` and the cache key covers them.
TOOLS_ROLE = "sonar_tools"


class ToolsExtra(TypedDict):
    """What a request that declares tools adds to the request body."""
    tools: list[JsonObject]


def _split_tools(messages: list[JsonObject]) -> tuple[list[JsonObject], ToolsExtra | None]:
    if messages and messages[0].get("role") == TOOLS_ROLE:
        return messages[1:], {"tools": messages[0]["tools"]}
    return messages, None


def _first_token_alternatives(body: str) -> list[tuple[str, float]] | None:
    """``(token, logprob)`` of the first answer token's top alternatives (the token itself included),
    or None when the body has no log-probabilities."""
    try:
        content = json.loads(body)["choices"][0]["logprobs"]["content"]
        first = content[0]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(first, dict):
        return None
    pairs = [(first.get("token"), first.get("logprob"))]
    pairs += [(alt.get("token"), alt.get("logprob")) for alt in first.get("top_logprobs") or []
              if isinstance(alt, dict)]
    return [(t, float(lp)) for t, lp in pairs if isinstance(t, str) and isinstance(lp, (int, float))] or None


class OpenAIChatBackend:
    """Chat completions over HTTP with the ``openai`` SDK."""

    def __init__(self, config: LLMConfig, api_key: str | None) -> None:
        import openai

        self._openai = openai
        self.config = config
        # openai 3 sends through httpx2, earlier versions through httpx: the raw response type follows.
        if int(openai.__version__.split(".")[0]) >= 3:
            import httpx2 as httpx_module
        else:  # pragma: no cover - depends on the installed SDK
            import httpx as httpx_module
        self._raw = httpx_module.Response
        # A placeholder, never None: the SDK would otherwise pick up OPENAI_API_KEY on its own.
        self._client = openai.OpenAI(api_key=api_key or "sonar-no-key", base_url=config.base_url,
                                     timeout=config.timeout, max_retries=0)

    def check(self) -> None:
        return None

    def complete(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int) -> Answer:
        messages, extra = _split_tools(messages)
        return _answers_from_body(self._post(messages, temperature, max_tokens, 1, extra))[0]

    def complete_choices(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int,
                         n: int) -> list[Answer]:
        """Up to ``n`` answers in one call (the ``n`` parameter); an endpoint that ignores ``n`` gives one."""
        return _answers_from_body(self._post(messages, temperature, max_tokens, n))

    def complete_labels(self, messages: list[dict[str, str]], labels: tuple[str, ...], temperature: float,
                        max_tokens: int, seed: int) -> Answer:
        """One answer with the first token's top alternatives (``logprobs``), read as a choice among ``labels``.

        The chosen label is the most probable one (see :func:`.labels.labels_from_top_tokens`). An
        endpoint that returns no log-probabilities gives ``meta["logprobs"] = False`` and the text
        answer; one whose top tokens name no label gives the text answer, confidence None.
        """
        body = self._post(messages, temperature, max_tokens, 1,
                          {"logprobs": True, "top_logprobs": TOP_LOGPROBS})
        answer = _answers_from_body(body)[0]
        top = _first_token_alternatives(body)
        if top is None:
            return Answer(answer.text, {**answer.meta, "logprobs": False, "confidence": None})
        probabilities = labels_from_top_tokens(top, labels)
        if probabilities is None:
            return Answer(answer.text, {**answer.meta, "confidence": None})
        label = choose(probabilities)
        # The endpoint's own text is not kept: the label is the answer.
        return Answer(label, {**answer.meta, "confidence": probabilities[label],
                              "label_probabilities": probabilities})

    def _post(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, n: int,
              extra: ToolsExtra | JsonObject | None = None) -> str:
        openai = self._openai
        body: JsonObject = {"model": self.config.model, "messages": messages, "temperature": temperature,
                                "max_tokens": max_tokens, **(extra or {})}
        if n > 1:
            body["n"] = n
        try:
            # The SDK's documented raw request: its auth, base URL, timeout and error types, without
            # the typed-parameter transform (a millisecond per call at a hundred calls a second).
            return self._client.post("/chat/completions", cast_to=self._raw, body=body).text
        except openai.APITimeoutError:
            raise TransientError("timeout", f"no answer within {self.config.timeout:g} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise TransientError("connection", f"connection failed: {type(cause).__name__}: {cause}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            try:
                text = exc.response.text
            except Exception:  # a body that cannot be read says nothing more
                text = ""
            message = f"HTTP {status}: {text[:_QUOTE]}".rstrip(": ")
            if status in (408, 409, 429) or status >= 500:
                kind = "rate_limit" if status == 429 else "server_error" if status >= 500 else "timeout"
                raise TransientError(kind, message, retry_after_seconds(exc.response.headers)) from None
            raise PermanentError(message) from None

    def close(self) -> None:
        self._client.close()


class Sampling(TypedDict, total=False):
    """``generate``'s sampling arguments: greedy at temperature 0, else plain sampling at the temperature."""
    do_sample: bool
    temperature: float
    top_p: float
    top_k: int


class LocalCausalLMBackend:
    """A causal LM from the model store, one generation at a time (it has the CPU or GPU to itself)."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._device: str | None = None

    def _store(self):
        from ..models import get_store

        return get_store()

    def check(self) -> None:
        from ..errors import ModelMissingError
        from ..extras import missing_modules, missing_reason

        # On the base install (no torch): say which extra to install, not that every answer failed.
        if missing := missing_modules(("torch", "transformers")):
            raise PermanentError(missing_reason("models", missing))
        try:
            self._store().resolve(self.config.model)
        except ModelMissingError as exc:
            raise PermanentError(str(exc)) from None

    def _load(self):
        from ..errors import ModelMissingError
        from ..models import pick_device

        if self._device is None:
            self._device = pick_device(self.config.device)
        try:
            return self._store().load_causal_lm(self.config.model, device=self._device)
        except ModelMissingError as exc:
            raise PermanentError(str(exc)) from None

    @staticmethod
    def _prompt(tokenizer, messages: list[dict[str, str]]) -> str:
        if getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        # A model without a chat template gets the turns as plain text.
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"

    def complete(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int) -> Answer:
        import torch

        model, tokenizer = self._load()
        prompt = self._prompt(tokenizer, messages)
        # The chat template already holds every special token (SmolLM2's tokenizer would add another BOS).
        inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(model.device)
        sampling: Sampling = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature, "top_p": 1.0, "top_k": 0}
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        with self._lock, torch.inference_mode():
            if temperature > 0:
                torch.manual_seed(seed)  # a sampled answer is reproducible from its request
            # Only ids and mask: some tokenizers add token_type_ids, which causal LMs refuse.
            output = model.generate(input_ids=inputs["input_ids"], attention_mask=inputs.get("attention_mask"),
                                    max_new_tokens=max_tokens, pad_token_id=pad, **sampling)
        new_tokens = output[0, inputs["input_ids"].shape[1]:]
        text = tokenizer.decode(new_tokens, skip_special_tokens=True).strip()
        return Answer(text=text, meta={"prompt_tokens": int(inputs["input_ids"].shape[1]),
                                       "completion_tokens": int(new_tokens.shape[0])})

    def label_scores(self, messages: list[dict[str, str]], labels: tuple[str, ...]) -> dict[str, float]:
        """Each label's summed log-probability as the answer to ``messages``: its tokens, then the end of
        sequence (so that "1" is not favoured over "10" for being shorter).

        One forward pass over the chat-templated prompt, then one pass for all the labels together: the
        prompt's cached keys and values repeated once per label, the labels' tokens as one batch (padded
        on the right, which a causal model's earlier positions never see). A judge with eleven labels
        (a 0-10 score) costs two passes, not twelve.
        """
        import torch

        model, tokenizer = self._load()
        prompt = self._prompt(tokenizer, messages)
        prompt_ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(model.device)
        eos = tokenizer.eos_token_id
        tokens = [tokenizer(label, add_special_tokens=False)["input_ids"] for label in labels]
        targets = [ids[1:] + ([eos] if eos is not None else []) for ids in tokens]
        scores: dict[str, float] = {}
        with self._lock, torch.inference_mode():
            # Only the last position's logits are read: the output layer on every prompt position would be
            # about a fifth of the pass for a small model with a large vocabulary (SmolLM2: 49k tokens).
            last_only = {"logits_to_keep": 1} if _keeps_logits(model) else {}
            out = model(input_ids=prompt_ids, use_cache=True, **last_only)
            first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
            stepped = [i for i, t in enumerate(targets) if t]
            logprobs = None
            if stepped:
                width = max(len(tokens[i]) for i in stepped)
                pad = eos if eos is not None else 0
                batch = torch.tensor([tokens[i] + [pad] * (width - len(tokens[i])) for i in stepped],
                                     device=model.device)
                cache = out.past_key_values
                cache.batch_repeat_interleave(len(stepped))
                step = model(input_ids=batch, past_key_values=cache, use_cache=True)
                logprobs = torch.log_softmax(step.logits.float(), dim=-1)
            row_of = {i: n for n, i in enumerate(stepped)}
            for i, label in enumerate(labels):
                total = float(first[tokens[i][0]])
                if targets[i]:
                    row = logprobs[row_of[i], :len(targets[i])]
                    total += float(row[torch.arange(len(targets[i])), torch.tensor(targets[i])].sum())
                scores[label] = total
        return scores

    def complete_labels(self, messages: list[dict[str, str]], labels: tuple[str, ...], temperature: float,
                        max_tokens: int, seed: int) -> Answer:
        """The most probable label (no generation); with a temperature, a label drawn from the labels'
        softmax at that temperature, reproducibly from ``seed``."""
        import random

        scores = self.label_scores(messages, labels)
        probabilities = label_distribution(scores)
        draw = random.Random(seed).random() if temperature > 0 else None
        label = choose(label_distribution(scores, temperature) if temperature > 0 else probabilities, draw)
        return Answer(label, {"confidence": probabilities[label], "label_probabilities": probabilities,
                              "label_scores": scores})

    def close(self) -> None:
        return None


def _keeps_logits(model: Any) -> bool:
    """Whether the model's forward takes ``logits_to_keep`` (transformers' causal LMs since 4.50)."""
    import inspect

    try:
        return "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a forward without a readable signature: compute every position
        return False


def make_backend(config: LLMConfig, api_key: str | None) -> Backend:
    if config.backend == "local":
        return LocalCausalLMBackend(config)
    return OpenAIChatBackend(config, api_key)


def seed_of(key: str) -> int:
    """A 31-bit seed from a request key, for reproducible sampling."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF
