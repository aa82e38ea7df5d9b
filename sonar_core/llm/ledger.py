"""Tokens, cost and the budget of one run: every call tallied per host, per judge and per evaluator.

One :class:`CostLedger` per run; every :class:`~.client.LLMClient` of the run (the hosts' and the
judges') holds it as ``client.ledger``. Before each call that the response cache could not answer
the client asks :meth:`CostLedger.begin`; when the call returns, :meth:`CostLedger.settle` records
its tokens and cost (or :meth:`CostLedger.release` when it failed). docs/costs.md says it for users.

* **Tokens** of a call are the endpoint's ``usage`` (``prompt_tokens``/``completion_tokens``, or
  ``input_tokens``/``output_tokens``); where a call reports none and its configuration is a local
  model, the model's own tokenizer counts the prompt (chat template applied) and the answer.
* **Cost** is ``Price`` (USD per 1,000 input and output tokens) of the host or judge key, from the
  run configuration's ``prices:``; no price, no cost (``null``, never 0).
* **Budget** (``--max-cost``): before a call, its cost is *estimated* (:meth:`CostLedger.estimate`)
  and reserved (:mod:`.budget`: whole nano-dollars, waits that end); when what was spent, plus what
  calls in flight reserved, plus this estimate would exceed the budget, the call waits for those in
  flight to settle and, if it still does not fit, the ledger raises
  :class:`~sonar_core.errors.BudgetExceeded` and every later call raises too: the run stops asking
  new questions. A call whose endpoint reports no usage counts its estimate as spent.
* **Cancel** (:meth:`CostLedger.cancel`, Ctrl-C): no call of the run starts any more.
* **Dry run** (``dry=True``): nothing is asked. :meth:`begin` counts the call with its estimated
  tokens and hands back placeholder answers (a labelled request's first label); a request already
  counted is answered again without counting, as the response cache would answer it in a real run.

Estimates: :meth:`CostLedger.estimate` (docs/costs.md, *Dry runs*).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from .backends import Answer
from .budget import Budget, Reservation, units_of
from .requests import CallParams, ChatMessage
from .tokens import (CHARS_PER_TOKEN, DEFAULT_OUTPUT_TOKENS, Price, TallyRecord, TokenTally, estimate_prompt_tokens,
                     estimate_text_tokens, usage_tokens)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["Price", "TokenTally", "Reservation", "CostLedger", "PLACEHOLDER", "CostsRecord", "BudgetRecord",
           "CostEstimate", "Taken"]


class BudgetRecord(TypedDict):
    """run.json's ``costs.budget``: the --max-cost limit, what was spent and whether the run stopped on it."""
    max_cost: float
    spent: float
    stopped: bool


class _CostsTally(TypedDict):
    currency: str
    hosts: dict[str, TallyRecord]
    judges: dict[str, TallyRecord]
    evaluators: dict[str, TallyRecord]
    total: TallyRecord


# ``budget`` in a total=False subclass: under ``from __future__ import annotations`` Python 3.11 cannot see
# NotRequired at run time, and run.json's shape is checked at run time (test_record_shapes).
class CostsRecord(_CostsTally, total=False):
    """run.json's ``costs``: every host's, judge's and evaluator's tally, the total, the budget if any."""
    budget: BudgetRecord


class TokenPair(TypedDict):
    input: int
    output: int


class CostEstimate(TypedDict):
    """A dry run's answer: each figure maps every host and judge key (and ``total``) to its value."""
    calls: dict[str, int]
    tokens: dict[str, TokenPair]
    cost: dict[str, float | None]
    kinds: dict[str, str]  #: ``host``, ``judge`` or ``host and judge``
    currency: str
    estimate: bool


#: What a ledger tallied since the last take: ``hosts``/``judges``/``evaluators`` -> key -> tally record.
Taken = dict[str, dict[str, TallyRecord]]

#: The word a dry run's placeholder answers are made of.
PLACEHOLDER = "placeholder"
#: Most cached answers read per key for the output estimate.
_CACHED_SAMPLE = 500


@dataclass
class _Mean:
    total: float = 0.0
    count: int = 0

    def add(self, value: float) -> None:
        self.total += value
        self.count += 1

    def value(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass
class CostLedger:
    """See the module docstring. Thread-safe."""

    prices: dict[str, Price] = field(default_factory=dict)
    #: The budget in USD (``--max-cost``), or None.
    max_cost: float | None = None
    #: A dry run: count and estimate, ask nothing.
    dry: bool = False
    #: ``hosts`` / ``judges`` -> key -> tally, and evaluator label -> tally (its judge calls).
    hosts: dict[str, TokenTally] = field(default_factory=dict)
    judges: dict[str, TokenTally] = field(default_factory=dict)
    evaluators: dict[str, TokenTally] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        #: What was spent and reserved, in whole nano-dollars; the waits of calls that do not fit.
        self.budget = Budget()
        self._outputs: dict[tuple[str, str], _Mean] = {}
        self._cached_outputs: dict[tuple[str, str], float | None] = {}
        self._tokenizers: dict[str, PreTrainedTokenizerBase | None] = {}
        self._seen: set[str] = set()

    @staticmethod
    def kind_of(client) -> str:
        """``hosts`` for a model under test's client, ``judges`` for the rest."""
        return "hosts" if client.events.cache_kind == "sut" else "judges"

    def price(self, key: str) -> Price | None:
        return self.prices.get(key)

    @property
    def spent(self) -> float:
        """USD spent (priced calls answered, by this run and the runs it resumes)."""
        return self.budget.spent

    @spent.setter
    def spent(self, usd: float) -> None:
        self.budget.spent = usd

    @property
    def stopped(self) -> str | None:
        """Why the run stopped asking (the budget's one-line message), or None."""
        return self.budget.stopped

    def cancel(self, reason: str) -> None:
        """Ctrl-C: every call of the run is refused from now on (a waiting one too), with ``reason``."""
        self.budget.cancel(reason)

    def resume_from(self, record: CostsRecord | None) -> None:
        """Start from what an interrupted run's run.json ``costs`` recorded: a resumed run's totals and
        budget cover the whole run."""
        if not record:
            return
        for name in ("hosts", "judges", "evaluators"):
            target = getattr(self, name)
            for key, value in (record.get(name) or {}).items():
                if isinstance(value, dict):
                    target[key] = TokenTally.of(value)
        spent = (record.get("budget") or {}).get("spent")
        total = (record.get("total") or {}).get("cost")
        self.spent = float(spent if spent is not None else total or 0.0)

    # -- estimates -----------------------------------------------------------------------------

    def _tokenizer(self, client):
        """The local model's tokenizer for a local configuration (loaded once), else None."""
        config = client.config
        if config.backend != "local":
            return None
        with self._lock:
            if config.model in self._tokenizers:
                return self._tokenizers[config.model]
        tokenizer = None
        try:
            from transformers import AutoTokenizer

            from ..models import get_store

            tokenizer = AutoTokenizer.from_pretrained(str(get_store().resolve(config.model)))
        except Exception:  # no transformers, no model: the character rule stands in
            tokenizer = None
        with self._lock:
            self._tokenizers[config.model] = tokenizer
        return tokenizer

    def count_tokens(self, client, messages: list[ChatMessage], answer: str | None = None) -> tuple[int, int | None]:
        """(prompt, answer) tokens: the local tokenizer's count where there is one, else the estimate."""
        tokenizer = self._tokenizer(client)
        if tokenizer is not None:
            from .backends import LocalCausalLMBackend

            count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
            try:
                prompt = count(LocalCausalLMBackend._prompt(tokenizer, messages)) if messages else 0
                return prompt, (count(answer) if answer is not None else None)
            except Exception:  # a count must never cost the call: the character rule stands in
                pass
        return estimate_prompt_tokens(messages), (estimate_text_tokens(answer) if answer is not None else None)

    def _cached_mean(self, client, kind: str) -> float | None:
        """Mean output tokens of the free-text answers the response cache holds for this configuration."""
        ident = (kind, client.config.key)
        with self._lock:
            if ident in self._cached_outputs:
                return self._cached_outputs[ident]
        mean = _Mean()
        cache = client.cache
        stored = cache.answers_of(client.config.key, _CACHED_SAMPLE) if cache is not None else []
        for response in stored:
            text, meta = response, {}
            if response.startswith("{"):
                try:
                    payload = json.loads(response)
                    text, meta = str(payload["text"]), dict(payload.get("meta") or {})
                except (ValueError, KeyError, TypeError):
                    pass
            if "confidence" in meta:
                continue  # a labelled verdict: its length says nothing of free text
            _, output = usage_tokens(meta)
            mean.add(output if output is not None else estimate_text_tokens(text))
        with self._lock:
            self._cached_outputs[ident] = mean.value()
        return mean.value()

    def estimate(self, client, request, params: CallParams, choices: int = 1) -> tuple[int, int]:
        """(input, output) tokens one call of ``request`` is expected to take: input from the prompt (the local
        tokenizer for a local configuration, else the character rule of :mod:`.tokens`); output the longest
        label of a labelled request, else the mean output of this key's answers in this run, else of those
        the response cache holds, else ``DEFAULT_OUTPUT_TOKENS``, never above the request's ``max_tokens``."""
        kind = self.kind_of(client)
        input_tokens, _ = self.count_tokens(client, request.messages)
        cap = int(params.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)
        if request.labels:
            output = max(self.count_tokens(client, [], label)[1] or 0 for label in request.labels)
        else:
            with self._lock:
                seen = self._outputs.get((kind, client.config.key))
                mean = seen.value() if seen is not None else None
            if mean is None:
                mean = self._cached_mean(client, kind)
            output = min(cap, round(mean)) if mean is not None else min(cap, DEFAULT_OUTPUT_TOKENS)
        return input_tokens, output * max(1, choices)

    # -- calls ---------------------------------------------------------------------------------

    def begin(self, client, request, params: CallParams, key: str, choices: int = 1) -> Reservation:
        """Before an uncached call: reserve its estimated cost (BudgetExceeded when the budget would be
        passed; :meth:`.budget.Budget.reserve`); in a dry run, count it and give placeholder answers
        instead; once the run is cancelled, a refusal (``cancelled``)."""
        kind, who = self.kind_of(client), client.config.key
        evaluator = request.tags.get("evaluator") if kind == "judges" else None
        if self.budget.cancelled is not None:
            return Reservation(kind, who, evaluator, refused=self.budget.cancelled, cancelled=True)
        if not self.dry and self.max_cost is None:
            return Reservation(kind, who, evaluator)
        price = self.price(who)

        def estimate() -> Reservation:
            input_tokens, output_tokens = self.estimate(client, request, params, choices)
            amount = (price.cost(input_tokens, output_tokens) or 0.0) if price is not None else 0.0
            return Reservation(kind, who, evaluator, amount, input_tokens, output_tokens, units=units_of(amount))

        if not self.dry:
            return self.budget.reserve(self.max_cost, estimate, f"{kind[:-1]} '{who}'")
        reservation = estimate()
        reservation.open = False  # a dry run reserves nothing: nothing to give back
        with self._lock:
            counted = key not in self._seen
            self._seen.add(key)
            if counted:
                self._tally(kind, who, evaluator, 1, reservation.input_tokens, reservation.output_tokens,
                            reservation.amount if price is not None else None)
        reservation.answers = [self._placeholder(request, reservation.output_tokens // max(1, choices))
                               for _ in range(max(1, choices))]
        return reservation

    @staticmethod
    def _placeholder(request, output_tokens: int) -> Answer:
        """A dry run's answer: the first label, else text about as long as the estimated answer (so that
        a judge's prompt holding it is estimated about right)."""
        if request.labels:
            return Answer(request.labels[0], {"confidence": None})
        words = max(1, round(output_tokens * CHARS_PER_TOKEN / (len(PLACEHOLDER) + 1)))
        return Answer(" ".join([PLACEHOLDER] * words), {})

    def tokens(self, client, request, answer: Answer) -> tuple[int | None, int | None]:
        """A call's (input, output) tokens: its usage; for a local model without usage, its tokenizer's count."""
        input_tokens, output_tokens = usage_tokens(answer.meta)
        if input_tokens is None and output_tokens is None and client.config.backend == "local" \
                and self._tokenizer(client) is not None:
            input_tokens, output_tokens = self.count_tokens(client, request.messages, answer.text)
        return input_tokens, output_tokens

    def settle(self, reservation: Reservation | None, client, input_tokens: int | None,
               output_tokens: int | None, evaluator: str | None = None) -> float | None:
        """Record one answered call (``reservation`` None: a further choice of a call already counted);
        returns its cost (None without a price or tokens)."""
        kind = reservation.kind if reservation is not None else self.kind_of(client)
        who = client.config.key
        if reservation is not None:
            evaluator = reservation.evaluator
        price = self.price(who)
        cost = price.cost(input_tokens, output_tokens) if price is not None else None
        with self._lock:
            self._tally(kind, who, evaluator, int(reservation is not None), input_tokens, output_tokens, cost)
            if output_tokens is not None:
                self._outputs.setdefault((kind, who), _Mean()).add(output_tokens)
        # No usage reported: the estimate counts against the budget. Given back after the tally, so that
        # a waiting call estimates again with this answer's output.
        spent = units_of(cost) if cost is not None else (
            reservation.units if reservation is not None and price is not None else 0)
        if reservation is not None:
            self.budget.give_back(reservation, spent)
        elif spent:
            self.budget.add_spent(spent)
        return cost

    def release(self, reservation: Reservation | None) -> None:
        """A call that failed, or ended without settling: its reservation is given back (nothing is known
        to be spent); one already settled or released is left alone."""
        if reservation is not None:
            self.budget.give_back(reservation)

    def _tally(self, kind: str, who: str, evaluator: str | None, calls: int, input_tokens: int | None,
               output_tokens: int | None, cost: float | None) -> None:
        getattr(self, kind).setdefault(who, TokenTally()).add(calls, input_tokens, output_tokens, cost)
        if evaluator:
            self.evaluators.setdefault(str(evaluator), TokenTally()).add(calls, input_tokens, output_tokens, cost)

    # -- records -------------------------------------------------------------------------------

    def totals(self) -> TokenTally:
        total = TokenTally()
        with self._lock:
            for tally in [*self.hosts.values(), *self.judges.values()]:
                total.add(tally.calls, tally.input_tokens, tally.output_tokens,
                          tally.cost if tally.priced else None)
        return total

    def take(self) -> Taken:
        """What this ledger tallied since the last take (``hosts``/``judges``/``evaluators`` -> key -> tally
        record), emptied: a Ray worker's shard hands it to the driver, which adds it with :meth:`merge`."""
        with self._lock:
            taken = {name: {key: tally.as_dict() for key, tally in getattr(self, name).items()}
                     for name in ("hosts", "judges", "evaluators")}
            self.hosts, self.judges, self.evaluators = {}, {}, {}
        return {name: tallies for name, tallies in taken.items() if tallies}

    def merge(self, taken: Taken) -> None:
        """Add a worker's :meth:`take` to this run's tallies (and its priced calls to what was spent)."""
        with self._lock:
            for name in ("hosts", "judges", "evaluators"):
                for key, record in (taken.get(name) or {}).items():
                    tally = TokenTally.of(record)
                    getattr(self, name).setdefault(key, TokenTally()).add(
                        tally.calls, tally.input_tokens, tally.output_tokens, tally.cost if tally.priced else None)
                    if name != "evaluators" and tally.priced:
                        self.budget.add_spent(units_of(tally.cost))

    def record(self) -> CostsRecord | None:
        """run.json's ``costs`` (None when the run made no call and has no budget)."""
        with self._lock:
            empty = not (self.hosts or self.judges)
            hosts = {k: t.as_dict() for k, t in sorted(self.hosts.items())}
            judges = {k: t.as_dict() for k, t in sorted(self.judges.items())}
            evaluators = {k: t.as_dict() for k, t in sorted(self.evaluators.items())}
        if empty and self.max_cost is None:
            return None
        record: CostsRecord = {"currency": "USD", "hosts": hosts, "judges": judges, "evaluators": evaluators,
                               "total": self.totals().as_dict()}
        if self.max_cost is not None:
            record["budget"] = {"max_cost": self.max_cost, "spent": round(self.spent, 6),
                                "stopped": self.stopped is not None}
        return record

    def estimate_record(self) -> CostEstimate:
        """A dry run's answer (``sonar run --dry-run --json``): ``calls``, ``tokens`` and ``cost``, each
        mapping every host and judge key (and ``total``) to its figure."""
        tallies: dict[str, TokenTally] = {}
        kinds: dict[str, str] = {}
        with self._lock:
            for kind, section in (("host", self.hosts), ("judge", self.judges)):
                for key, tally in section.items():  # a key both a host's and a judge's: one entry, summed
                    tallies.setdefault(key, TokenTally()).add(tally.calls, tally.input_tokens, tally.output_tokens,
                                                         tally.cost if tally.priced else None)
                    kinds[key] = f"{kinds[key]} and {kind}" if key in kinds else kind
        total = self.totals()
        calls = {k: t.calls for k, t in sorted(tallies.items())}
        tokens = {k: {"input": t.input_tokens, "output": t.output_tokens} for k, t in sorted(tallies.items())}
        cost = {k: (round(t.cost, 6) if t.priced else None) for k, t in sorted(tallies.items())}
        return {"calls": {**calls, "total": total.calls},
                "tokens": {**tokens, "total": {"input": total.input_tokens, "output": total.output_tokens}},
                "cost": {**cost, "total": round(total.cost, 6) if total.priced else None},
                "kinds": dict(sorted(kinds.items())), "currency": "USD", "estimate": True}
