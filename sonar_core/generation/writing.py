"""Writing the items: one LLM call per item, read into a schema, asked again a bounded number of times.

Every item of the plan is asked through the LLM client (its response cache, retries, single-flight,
cost ledger and journal); items are asked in groups, concurrently up to the configuration's bound.
A reply that cannot be read (:mod:`.parsing`) is asked again with the reason appended to the prompt
(a new request, so neither the cache nor the single-flight hands back the same unreadable reply),
at most ``max_attempts`` times in all. An item whose call failed after the client's own retries, or
whose every reply was unreadable, is *failed* with the reason; it never ends the run.

Because every answer is cached as it arrives, a run killed at any point and started again asks no
finished item again, and a rerun makes no call at all. In a dry run (the ledger's ``dry``) the
placeholder answers are taken as items, so the count of calls is what a clean run makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..errors import BudgetExceeded
from ..llm import LLMRequest
from .graph import DocumentGraph
from .parsing import GeneratedReply, ReplyError, parse_reply
from .prompts import item_prompt
from .quotas import ItemPlan

__all__ = ["WrittenItem", "write_items", "GENERATE_TAG"]

#: The ``evaluator`` tag of the generation calls (the ledger's per-purpose tally).
GENERATE_TAG = "generate"


@dataclass
class WrittenItem:
    plan: ItemPlan
    reply: GeneratedReply | None = None
    #: Why the item failed (one line), or None.
    error: str | None = None
    attempts: int = 0
    repairs: list[str] = field(default_factory=list)
    #: Each unreadable reply's reason, in order.
    unreadable: list[str] = field(default_factory=list)


def _passages(graph: DocumentGraph, plan: ItemPlan) -> list[tuple[str, str]]:
    return [(chunk_id, graph.chunks[graph.index[chunk_id]]["text"]) for chunk_id in plan.chunk_ids]


def _request(graph: DocumentGraph, plan: ItemPlan, note: str | None, max_tokens: int, attempt: int) -> LLMRequest:
    prompt = item_prompt(plan.type, plan.language, _passages(graph, plan), plan.persona, plan.style, note,
                         plan.variant)
    # The attempt is the request's repeat index (part of its cache key): a third ask with the same note as
    # the second is still a new request, never the second's cached unreadable reply.
    return LLMRequest([{"role": "user", "content": prompt}], repeat=attempt - 1, max_tokens=max_tokens,
                      tags={"evaluator": GENERATE_TAG, "test_case_key": plan.key})


def write_items(client, graph: DocumentGraph, plans: Sequence[ItemPlan], *, max_attempts: int = 5,
                max_tokens: int = 400, group: int = 16,
                on_item: Callable[[WrittenItem], Any] | None = None) -> list[WrittenItem]:
    """Write every planned item (in plan order); ``on_item`` is told of each as it is settled.

    Raises:
        BudgetExceeded: the run's budget refused a call (items settled so far were reported).
    """
    dry = bool(getattr(client.ledger, "dry", False))
    written = [WrittenItem(plan) for plan in plans]
    for start in range(0, len(written), group):
        pending = [(item, None) for item in written[start:start + group]]
        for attempt in range(1, max_attempts + 1):
            if not pending:
                break
            requests = [_request(graph, item.plan, note, max_tokens, attempt) for item, note in pending]
            answers = client.complete_many(requests)
            again = []
            for (item, _), answer in zip(pending, answers):
                item.attempts = attempt
                offered = list(item.plan.chunk_ids)
                if not answer.ok:
                    if "budget reached" in (answer.error or ""):
                        raise BudgetExceeded(client.ledger.stopped or answer.error)
                    item.error = f"the call failed: {answer.error}"
                elif dry and not answer.cached:  # a placeholder: what a clean reply would be
                    item.reply = GeneratedReply(question=answer.text[:200] or "placeholder", answer=answer.text or "placeholder",
                                                chunk_ids=offered)
                else:
                    try:
                        item.reply, item.repairs = parse_reply(answer.text, offered)
                    except ReplyError as exc:
                        item.unreadable.append(str(exc))
                        if attempt < max_attempts:
                            again.append((item, str(exc)))
                            continue
                        item.error = f"no readable reply in {attempt} attempt(s): {exc}"
                if on_item is not None:
                    on_item(item)
            pending = again
    return written
