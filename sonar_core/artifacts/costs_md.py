"""``costs.md``: the run's calls, tokens and cost per host, judge and evaluator, as a Markdown table.

Made from run.json's ``costs`` record alone (:meth:`sonar_core.llm.ledger.CostLedger.record`); keys
come from configurations and plugins, so every cell goes through :func:`.markdown.md_cell`.
"""

from __future__ import annotations

from .markdown import md_cell
from ..llm.ledger import CostsRecord

__all__ = ["costs_markdown", "costs_summary", "COST_KINDS"]

#: run.json's sections of the costs record, and what one row of each is.
COST_KINDS = (("hosts", "host"), ("judges", "judge"), ("evaluators", "evaluator"))


def _cost(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def costs_markdown(costs: CostsRecord) -> str:
    """The table, the total, and the budget when the run had one."""
    lines = ["# Costs", "",
             "Calls this run made (answers from the response cache cost nothing), their tokens (the endpoint's "
             "usage, or a local model's tokenizer) and their cost in USD at the run's `prices:` (– : no price). "
             "An evaluator's row counts the judge calls it asked for.", "",
             "| | key | calls | input tokens | output tokens | cost (USD) |", "|---|---|---:|---:|---:|---:|"]
    for section, label in COST_KINDS:
        for key, tally in costs.get(section, {}).items():
            lines.append(f"| {label} | {md_cell(key)} | {tally['calls']} | {tally['input_tokens']} | "
                         f"{tally['output_tokens']} | {_cost(tally['cost'])} |")
    total = costs["total"]
    lines.append(f"| **total** | | {total['calls']} | {total['input_tokens']} | {total['output_tokens']} | "
                 f"{_cost(total['cost'])} |")
    budget = costs.get("budget")
    if budget:
        state = "stopped the run" if budget["stopped"] else "was not reached"
        lines += ["", f"Budget (`--max-cost`): {budget['max_cost']:g} USD; spent {budget['spent']:.4f} USD; the budget "
                  f"{state}."]
    return "\n".join(lines) + "\n"


def costs_summary(costs: CostsRecord) -> str:
    """The costs in one line, for the top of index.html: calls, tokens, and the cost or why there is none.

    ``121 calls · 33,260 input and 155 output tokens · no prices set``; with prices, the cost in USD
    (and the hosts and judges without a price, whose calls it leaves out); with ``--max-cost``, the budget.
    """
    total = costs["total"]
    calls = total["calls"]
    parts = [f"{calls:,} call{'s' if calls != 1 else ''}",
             f"{total['input_tokens']:,} input and {total['output_tokens']:,} output tokens"]
    unpriced = [key for section in ("hosts", "judges") for key, tally in costs.get(section, {}).items()
                if tally["cost"] is None and tally["calls"]]
    if total["cost"] is None:
        parts.append("no prices set")
    else:
        parts.append(f"{_cost(total['cost'])} USD" + (f" (no price for {', '.join(unpriced)})" if unpriced else ""))
    budget = costs.get("budget")
    if budget:
        parts.append(f"budget {budget['max_cost']:g} USD, spent {budget['spent']:.4f} USD"
                     + (": the budget stopped the run" if budget["stopped"] else ""))
    return " · ".join(parts)
