"""``costs.md``: the run's calls, tokens and cost per host, judge and evaluator, as a Markdown table.

Made from run.json's ``costs`` record alone (:meth:`sonar_core.llm.ledger.CostLedger.record`); keys
come from configurations and plugins, so every cell goes through :func:`.markdown.md_cell`.
"""

from __future__ import annotations

from typing import Any

from .markdown import md_cell

__all__ = ["costs_markdown", "COST_KINDS"]

#: run.json's sections of the costs record, and what one row of each is.
COST_KINDS = (("hosts", "host"), ("judges", "judge"), ("evaluators", "evaluator"))


def _cost(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def costs_markdown(costs: dict[str, Any]) -> str:
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
