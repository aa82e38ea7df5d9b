"""The client's side of the run's cost ledger: what :class:`~.client.LLMClient` calls around a call.

Kept apart so that the client's own code stays small: around an uncached call :func:`reserved_call`
(:func:`begin_call`: the budget's word, or a dry run's placeholder; the reservation given back
however the call ends), :func:`dry_call` (the call to make instead of the backend's, if any), then
:func:`count_tokens` for an answer or :func:`release_call` for a failure.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, TypedDict

from ..errors import BudgetExceeded
from .backends import Answer, PermanentError
from .ledger import Reservation
from .requests import CallParams
from .tokens import usage_tokens

__all__ = ["begin_call", "reserved_call", "dry_call", "count_tokens", "release_call"]


def begin_call(client, request, params: CallParams, key: str, choices: int = 1) -> Reservation | None:
    """The ledger's word before one uncached call of ``client`` (None without a ledger); a call the budget
    refuses comes back ``refused``."""
    if client.ledger is None:
        return None
    try:
        return client.ledger.begin(client, request, params, key, choices)
    except BudgetExceeded as exc:
        return Reservation(client.ledger.kind_of(client), client.config.key, None, refused=str(exc))


@contextmanager
def reserved_call(client, request, params: CallParams, key: str, choices: int = 1) -> Iterator[Reservation | None]:
    """:func:`begin_call` around one call, its reservation given back however the call ends (an answer
    that cannot be cached raises before it settles): one left open would hold the budget's waiting
    calls for a call that is over. Settled or released inside, it is left alone."""
    reservation = begin_call(client, request, params, key, choices)
    try:
        yield reservation
    finally:
        release_call(client, reservation)


def dry_call(reservation: Reservation | None, many: bool = False):
    """The call to make instead of the backend's: in a dry run one that returns the placeholder answer
    (all of them, ``many``) at once; for a call the budget refused one that raises BudgetExceeded (a
    cancelled run's: PermanentError), so that the request fails as any failed request does (not
    cached, asked again by ``--resume``) and the caller keeps what was answered; None otherwise."""
    if reservation is not None and reservation.refused is not None:
        message, refusal = reservation.refused, (PermanentError if reservation.cancelled else BudgetExceeded)

        def refuse():
            raise refusal(message)  # a cancelled run's call: the reason alone (PermanentError), no retry
        return refuse
    if reservation is None or reservation.answers is None:
        return None
    answers = reservation.answers
    return (lambda: list(answers)) if many else (lambda: answers[0])


def count_tokens(client, request, answer: Answer, reservation: Reservation | None) -> "CallTokens":
    """Count one answer's tokens and cost (the client's counters, the run's ledger); the journal's fields
    for them, those known only. A dry run's placeholder was counted when its call began."""
    if (reservation is not None and reservation.answers is not None) or (client.ledger is not None
                                                                          and client.ledger.dry):
        return {}
    if client.ledger is not None:
        input_tokens, output_tokens = client.ledger.tokens(client, request, answer)
        cost = client.ledger.settle(reservation, client, input_tokens, output_tokens, request.tags.get("evaluator"))
    else:
        (input_tokens, output_tokens), cost = usage_tokens(answer.meta), None
    client._count(input_tokens=input_tokens or 0, output_tokens=output_tokens or 0)
    if cost is not None:
        with client._stats_lock:
            client.stats.cost = (client.stats.cost or 0.0) + cost
    fields: CallTokens = {}
    if input_tokens is not None:
        fields["input_tokens"] = input_tokens
    if output_tokens is not None:
        fields["output_tokens"] = output_tokens
    if cost is not None:
        fields["call_cost"] = cost
    return fields


class CallTokens(TypedDict, total=False):
    """The journal's fields for one answered call's tokens and cost (those known only)."""
    input_tokens: int
    output_tokens: int
    call_cost: float


def release_call(client, reservation: Reservation | None) -> None:
    """A call that failed, or ended without settling: its reservation is given back (once: the ledger
    leaves a settled or released one alone)."""
    if reservation is not None and client.ledger is not None:
        client.ledger.release(reservation)
