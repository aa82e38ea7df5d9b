"""The LLM client every part of Sonar shares: cache first, then a bounded, paced, retried call.

One :class:`LLMClient` per configuration and run. :meth:`LLMClient.complete_many` answers a batch
of requests in order: cached answers at once, the rest on up to ``max_concurrency`` threads, each
request started no faster than ``requests_per_minute`` allows. A request that fails with a
timeout, 429, 5xx, a dropped connection or a malformed body is retried ``retries`` times with
exponential backoff and jitter; a 429's ``Retry-After`` pauses every thread of the client, not
only the one that got it. A request that still fails comes back as a :class:`Completion` with
``error`` set (never an exception): the caller counts it, and nothing is cached for it, so the
next run asks again.

Journal events (ModelBench's names): ``fetched annotator response`` (live, with ``run_time``),
``using cached annotator response``, ``retrying annotator request`` and ``annotator request
failed``; each carries ``annotator`` (the configuration key), ``request`` (model, messages,
sampling parameters, repeat) and the caller's item fields (evaluator, test case, model).
A client that asks a model under test (:mod:`sonar_core.hosts`) is made with
:data:`SUT_EVENTS`: the same events named ``fetched sut response``, ``using cached sut
response``, ``retrying sut request`` and ``sut request failed``, and with ``envelope=True`` its
cache entries keep the answer's metadata (token usage, retrieved contexts) and call duration too.

A *labelled* request (``LLMRequest.labels``, a judge's constrained verdict) is answered with one of
its labels and the label's probability (``Completion.confidence``) by a backend that can see
probabilities (:mod:`.labels`); the labels are part of its cache key, so a labelled answer never
collides with a free-text one, and its cache entry keeps the confidence. An endpoint that returns no
log-probabilities is noticed once (as an endpoint that ignores ``n`` is): from then on this client
asks it for text, and the answer is read as text (confidence None).
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from typing import Any, Callable, Sequence

from .adaptive import AdaptiveLimit, LimitChange
from .backends import Answer, Backend, PermanentError, TransientError, make_backend, seed_of
from .cache import ResponseCache, request_key
from .configs import LLMConfig, LLMIdentity
from .call_costs import count_tokens, dry_call, release_call, reserved_call
from .rate_limit import RateLimiter, RetryPolicy
from .requests import (ANNOTATOR_EVENTS, SUT_EVENTS, CallParams, CallRecord, CallTags, ClientEvents, ClientStats,
                       Completion, LLMRequest, decode_entry, label_fields)
from .secrets import Redactor
from .single_flight import SingleFlight
from ..text_clean import clean_value

__all__ = ["LLMRequest", "Completion", "LLMClient", "ClientStats", "ClientEvents", "ANNOTATOR_EVENTS",
           "SUT_EVENTS"]


class LLMClient:
    """Answers requests for one :class:`LLMConfig`; thread-safe."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        api_key: str | None = None,
        cache: ResponseCache | None = None,
        journal=None,
        redact: Redactor | None = None,
        backend: Backend | None = None,
        retry_policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        events: ClientEvents = ANNOTATOR_EVENTS,
        identity: LLMIdentity | None = None,
        envelope: bool = False,
    ) -> None:
        """
        Args:
            events: the journal's names for this client's events (:data:`SUT_EVENTS` for hosts).
            identity: what keys the cache instead of ``config.identity()`` (hosts add their kind).
            envelope: cache ``{"text", "meta", "seconds"}`` as JSON instead of the bare text, so a
                cached answer keeps its token usage, contexts and original duration.
        """
        self.config = config
        self.events = events
        self.identity = identity if identity is not None else config.identity()
        self.envelope = envelope
        self.cache = cache
        self.journal = journal
        self.redact = redact or Redactor()
        self.redact.add(api_key)
        self.backend = backend if backend is not None else make_backend(config, api_key)
        self.retry_policy = retry_policy or RetryPolicy(base=config.backoff)
        self._sleep = sleep
        self._clock = clock
        self._limiter = RateLimiter(config.requests_per_minute, clock=clock, sleep=sleep) \
            if config.requests_per_minute else None
        self._slots = AdaptiveLimit(config.max_concurrency, adaptive=config.adaptive_concurrency, on_change=self.limit_changed)
        self._pause_lock = threading.Lock()
        self._not_before = float("-inf")
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.stats = ClientStats()
        self._stats_lock = threading.Lock()
        #: False once the endpoint answered a call for several choices with fewer.
        self._choices_work = True
        #: False once the endpoint answered a labelled call without log-probabilities.
        self._logprobs_work = True
        self._flight = SingleFlight()
        #: A callable returning a context manager held around each backend call, besides this client's
        #: own slot: a cluster-wide slot (and pace) when workers of a Ray run share one LLM's limits
        #: (:mod:`sonar_core.execution.ray_limiter`). None: this client's own bounds are the only ones.
        self.gate: Callable[[], Any] | None = None
        self.ledger: Any = None  #: the run's CostLedger: tokens, cost, budget and dry run (:mod:`.ledger`)

    # -- requests ------------------------------------------------------------------------------

    def _params(self, request: LLMRequest) -> CallParams:
        cap = self.config.max_tokens if request.max_tokens is None else min(request.max_tokens, self.config.max_tokens)
        params: CallParams = {"temperature": self.config.temperature, "max_tokens": cap}
        if request.labels:
            # Part of the cache key: a labelled answer never stands for a free-text one.
            params["labels"] = list(request.labels)
        return params

    def _record(self, request: LLMRequest, params: CallParams) -> CallRecord:
        """The request as the journal and the cache keep it (no secret: none is in a request)."""
        return {"model": self.config.model, "messages": request.messages, **params, "repeat": request.repeat}

    def _event(self, message: str, **fields: Any) -> None:
        if self.journal is not None:
            who = {self.events.who: self.config.key} if self.events.who else {}
            self.journal.event(message, self.events.cls, "complete", **{**who, **fields})

    def _count(self, **increments: float) -> None:
        with self._stats_lock:
            for name, value in increments.items():
                self.stats.add(name, value)

    def complete(self, messages: list[dict[str, str]] | str, *, repeat: int = 0, max_tokens: int | None = None,
                 **tags: Any) -> Completion:
        """Answer one request (see :meth:`complete_many`); a string is one user message."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        return self.complete_many([LLMRequest(messages, repeat, max_tokens, tags)])[0]

    def is_cached(self, request: LLMRequest) -> bool:
        """Whether the response cache holds an answer to ``request`` (no call, no journal event): lets an
        asynchronous caller answer it on its own thread instead of handing it to a worker."""
        if self.cache is None:
            return False
        key = request_key(self.identity, request.messages, self._params(request), request.repeat)
        return self.cache.get(key, count=False) is not None

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        """Answer every request, in order; cached answers need no call and failures do not raise."""
        results, pending = self._lookup(requests)
        self._fetch_all(pending, results)
        return [r for r in results if r is not None]

    def complete_choices(self, request: LLMRequest, n: int) -> list[Completion]:
        """``n`` answers to one prompt: the repeats ``request.repeat`` to ``request.repeat + n - 1``.

        Each answer is its own cache entry, exactly as :meth:`complete_many` of those repeats keeps
        it, so the two share a cache. The answers not cached are asked for in *one* call with ``n``
        choices (the chat-completions ``n``) when the backend can and the configuration's
        ``multiple_choices`` allows: one request in flight and one latency instead of ``n``. An
        endpoint that answers with fewer choices is asked for the rest one call each, and is not
        asked for choices again by this client.
        """
        requests = [replace(request, repeat=request.repeat + i) for i in range(max(1, n))]
        multi = getattr(self.backend, "complete_choices", None)
        if multi is None or not self.config.multiple_choices or not self._choices_work or request.labels:
            return self.complete_many(requests)
        results, pending = self._lookup(requests)
        if len(pending) < 2:
            self._fetch_all(pending, results)
            return [r for r in results if r is not None]
        _, first, params, first_key = pending[0]
        # A dry run's call answers at once; the reservation is given back however the call ends.
        with reserved_call(self, first, params, first_key, len(pending)) as reservation:
            answers, error, attempts, seconds = self._attempts(first.tags, dry_call(reservation, many=True) or (
                lambda: multi(first.messages, params["temperature"], params["max_tokens"], seed_of(first_key),
                              len(pending))))
            if answers is None:
                for number, (index, req, req_params, key) in enumerate(pending):
                    results[index] = self._failed(req, req_params, key, error, attempts, seconds,
                                                  counted_seconds=seconds if number == 0 else 0.0,
                                                  reservation=None if number else reservation)
            else:
                answers = answers[:len(pending)]
                if len(answers) < len(pending):
                    self._choices_work = False  # the endpoint ignores n
                for number, ((index, req, req_params, key), answer) in enumerate(zip(pending, answers)):
                    results[index] = self._answered(req, req_params, key, answer, attempts, seconds,
                                                    counted_seconds=seconds if number == 0 else 0.0,
                                                    choices=len(answers), reservation=None if number else reservation)
                release_call(self, reservation)  # settled by the first answer, or given back: not held for the rest
                self._fetch_all(pending[len(answers):], results)
        return [r for r in results if r is not None]

    def _lookup(self, requests: Sequence[LLMRequest]) -> tuple[list[Completion | None], list[tuple]]:
        """Answers from the cache, in place; the rest as ``(index, request, params, key)``."""
        results: list[Completion | None] = [None] * len(requests)
        pending: list[tuple[int, LLMRequest, CallParams, str]] = []
        for index, request in enumerate(requests):
            params = self._params(request)
            key = request_key(self.identity, request.messages, params, request.repeat)
            cached = self.cache.get(key, self.events.cache_kind) if self.cache is not None else None
            if cached is not None:
                results[index] = self._cached(request, params, key, cached)
            else:
                pending.append((index, request, params, key))
        return results, pending

    def _cached(self, request: LLMRequest, params: CallParams, key: str, cached: str | None) -> Completion | None:
        if cached is None:
            return None
        text, meta, seconds, response = decode_entry(cached, self.envelope, bool(request.labels))
        self._count(requests=1, cached=1)
        self._event(self.events.cached, request=self._record(request, params),
                    response=response, **label_fields(request, meta), **request.tags)
        return Completion(text=text, cached=True, key=key, seconds=seconds, meta=meta)

    def _fetch_once(self, request: LLMRequest, params: CallParams, key: str) -> Completion:
        """:meth:`_fetch`, single-flight (:mod:`.single_flight`): identical requests share one call and outcome."""
        again = (lambda: None) if self.cache is None else \
            (lambda: self._cached(request, params, key, self.cache.get(key, self.events.cache_kind)))
        outcome, shared = self._flight.run(key, lambda: self._fetch(request, params, key), again)
        if not shared:
            return outcome
        self._count(requests=1, shared=1, failed=int(outcome.error is not None))
        self._event(self.events.shared, request=self._record(request, params),
                    **({"error": outcome.error} if outcome.error is not None else {"response": outcome.text}),
                    **request.tags)
        return SingleFlight.shared(outcome)

    def _fetch_all(self, pending: Sequence[tuple], results: list[Completion | None]) -> None:
        """Ask each pending request, concurrently up to the bound, into ``results``."""
        if len(pending) == 1 or self.config.max_concurrency == 1:
            for index, request, params, key in pending:
                results[index] = self._fetch_once(request, params, key)
        elif pending:
            pool = self._executor()
            futures = [(index, pool.submit(self._fetch_once, request, params, key))
                       for index, request, params, key in pending]
            for index, future in futures:
                results[index] = future.result()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.config.max_concurrency,
                                                thread_name_prefix=f"llm-{self.config.key}")
            return self._pool

    def _wait_for_pause(self) -> None:
        """Sleep while a 429's Retry-After holds for the whole client."""
        while True:
            with self._pause_lock:
                wait = self._not_before - self._clock()
            if wait <= 0:
                return
            self._sleep(wait)

    def _pause(self, seconds: float) -> None:
        with self._pause_lock:
            self._not_before = max(self._not_before, self._clock() + seconds)

    def _attempts(self, tags: CallTags, call: Callable[[], Any]) -> tuple[Any, str, int, float]:
        """Run one backend call under the client's rules: the 429 pause, the pacing, a concurrency slot,
        and retries with backoff. Returns (the call's result or None, the last error, attempts, seconds)."""
        started = time.perf_counter()
        attempts = 0
        error = ""
        while True:
            attempts += 1
            self._wait_for_pause()
            if self._limiter is not None:
                self._limiter.acquire()
            try:
                with self._slots.slot(report=self.gate is None), (self.gate() if self.gate else nullcontext()):
                    result = call()
            except TransientError as exc:
                error = self.redact(f"{exc.kind}: {exc}") or ""
                if attempts > self.config.retries:
                    break
                wait = self.retry_policy.delay(attempts, exc.retry_after)
                if exc.retry_after is not None:
                    self._pause(wait)
                self._count(retries=1)
                self._event(self.events.retrying, attempt=attempts, reason=error, wait=round(wait, 3), **tags)
                if exc.retry_after is None:
                    self._sleep(wait)
                continue
            except PermanentError as exc:
                error = self.redact(str(exc)) or ""
                break
            except Exception as exc:  # a backend bug must cost one row, not the run
                error = self.redact(f"{type(exc).__name__}: {exc}") or ""
                break
            return result, "", attempts, time.perf_counter() - started
        return None, error, attempts, time.perf_counter() - started

    def _call(self, request: LLMRequest, params: CallParams, key: str) -> Callable[[], Answer]:
        """The backend call for one request: a labelled one where the backend can score labels."""
        labelled = getattr(self.backend, "complete_labels", None)
        if request.labels and labelled is not None and self._logprobs_work:
            return lambda: labelled(request.messages, tuple(request.labels), params["temperature"],
                                    params["max_tokens"], seed_of(key))
        return lambda: self.backend.complete(request.messages, params["temperature"], params["max_tokens"],
                                             seed_of(key))

    def _fetch(self, request: LLMRequest, params: CallParams, key: str, store: bool = True) -> Completion:
        # A dry run's call answers at once, as a placeholder; the reservation is given back however it ends.
        with reserved_call(self, request, params, key) as reservation:
            answer, error, attempts, seconds = self._attempts(request.tags,
                                                              dry_call(reservation) or self._call(request, params, key))
            if answer is None:
                return self._failed(request, params, key, error, attempts, seconds, reservation=reservation)
            if request.labels and answer.meta.get("logprobs") is False and self._logprobs_work:
                self._logprobs_work = False  # the endpoint gives no log-probabilities: ask it for text from now on
                self._event("judge gives no logprobs", reason="a labelled request came back without logprobs; "
                            "its answers are read as text, without confidence", **request.tags)
            if request.labels:
                answer.meta.setdefault("confidence", None)
            return self._answered(request, params, key, answer, attempts, seconds, store=store, reservation=reservation)

    def _answered(self, request: LLMRequest, params: CallParams, key: str, answer: Answer, attempts: int,
                  seconds: float, *, store: bool = True, counted_seconds: float | None = None,
                  choices: int = 1, reservation: Any = None) -> Completion:
        """Cache, count and journal one answer. ``counted_seconds``: this answer's share of the call time
        in the statistics (the first of several choices carries the call); ``choices``: how many
        answers its call brought; ``reservation``: the ledger's, for the answer that carries the call."""
        record = self._record(request, params)
        # Cleaned before it is cached, journalled or returned: no UTF-8 file can hold a lone surrogate.
        text, cleaned = clean_value(self.redact(answer.text) or "")
        meta, meta_cleaned = clean_value(answer.meta)
        if meta_cleaned:
            answer = replace(answer, meta=meta)
        cleaned = cleaned or meta_cleaned
        response: Any = text
        if self.envelope:
            response = {"text": text, "meta": answer.meta}
        if store and self.cache is not None:
            # A labelled answer is stored in an envelope too, so that a cached one keeps its confidence.
            stored = json.dumps({"text": text, "meta": answer.meta, "seconds": seconds}, ensure_ascii=False,
                                default=str) if self.envelope or request.labels else text
            self.cache.put(key, self.config.key, record, stored, self.events.cache_kind)
        self._count(requests=1, fetched=1, seconds=seconds if counted_seconds is None else counted_seconds,
                    cleaned=int(cleaned))
        extra = {**({"choices": choices} if choices > 1 else {}), **count_tokens(self, request, answer, reservation)}
        if cleaned:
            extra["cleaned_text"] = True
        self._event(self.events.fetched, run_time=round(seconds, 4), request=record, response=response,
                    attempts=attempts, **extra, **label_fields(request, answer.meta), **request.tags)
        return Completion(text=text, attempts=attempts, seconds=seconds, key=key, meta=dict(answer.meta),
                          cleaned=cleaned)

    def _failed(self, request: LLMRequest, params: CallParams, key: str, error: str, attempts: int,
                seconds: float, *, counted_seconds: float | None = None, reservation: Any = None) -> Completion:
        release_call(self, reservation)
        self._count(requests=1, failed=1, seconds=seconds if counted_seconds is None else counted_seconds)
        self._event(self.events.failed, request=self._record(request, params), error=error, attempts=attempts,
                    **request.tags)
        return Completion(text=None, error=f"{error} (after {attempts} attempt{'s' if attempts != 1 else ''})",
                          attempts=attempts, seconds=seconds, key=key)

    def limit_changed(self, change: LimitChange) -> None:
        """Journal an adaptive change of the in-flight limit (its own or, under Ray, the cluster's); keep its range."""
        self._count(limit_low=min(change.start, change.to), limit_high=max(change.start, change.to))
        self._event("concurrency limit changed", configuration=self.config.key, **change.fields())

    # -- checks --------------------------------------------------------------------------------

    def check(self) -> str | None:
        """Why this LLM cannot be used at all (no model, no key), without calling it; None when it can."""
        try:
            self.backend.check()
        except PermanentError as exc:
            return self.redact(str(exc))
        return None

    def ping(self) -> Completion:
        """Ask for one short answer, bypassing the cache (``sonar judges``)."""
        request = LLMRequest([{"role": "user", "content": "Reply with the single word OK."}], max_tokens=5,
                             tags={"purpose": "check"})
        return self._fetch(request, self._params(request), "ping", store=False)

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                # Queued requests are dropped (an interrupted run must not go on asking); those in
                # flight end within the timeout.
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
        self.backend.close()
