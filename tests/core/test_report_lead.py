"""What index.html leads with (issue 34): the best-model card, the costs in one line, the problems summed
up per evaluator, and the hosts' calls split between the test suite and the evaluators; every figure
worked out by hand."""

from __future__ import annotations

import json
import re

import pytest

import sonar_core
from conftest import REPO
from sonar_core.artifacts.costs_md import costs_summary
from sonar_core.artifacts.html import lead_view
from sonar_core.findings.lead import lead_problems
from sonar_core.findings.types import LeadLine, LeadProblems
from sonar_core.execution.record import host_calls
from sonar_core.findings.run_findings import best_model_card


def test_best_model_card_names_the_evaluators_it_rests_on():
    card = best_model_card([["a", "b"], ["b", "a"], ["a", "b"]], ["a", "b"])
    assert card == {"title": "Best model overall", "model": "a", "note": "lowest mean rank over 3 evaluators"}
    # A ranking of one model does not count; "1 evaluator", singular.
    assert best_model_card([["b", "a"], ["a"]], ["a", "b"])["note"] == "lowest mean rank over 1 evaluator"


def test_one_model_has_no_best_model_card_but_a_model_under_test_card():
    # The agent demo: one model, so every ranking has one model and none counts.
    card = best_model_card([["claims-agent"]] * 5, ["claims-agent"])
    assert card == {"title": "Model under test", "model": "claims-agent",
                    "note": "one model: no other to rank it against, so no best model overall"}


@pytest.mark.parametrize("untrusted, note", [
    (0, "none: no evaluator ranks the models"),
    (1, "none: no evaluator ranks the models (1 untrusted judge ranks none)"),
    (8, "none: no evaluator ranks the models (8 untrusted judges rank none)"),
])
def test_models_that_no_evaluator_ranks_get_no_best_model_and_a_reason(untrusted, note):
    card = best_model_card([[], []], ["a", "b"], untrusted)
    assert card == {"title": "Best model overall", "model": None, "note": note}
    assert "over 0" not in card["note"]


def _costs(hosts=None, judges=None, total=None, budget=None):
    record = {"currency": "USD", "hosts": hosts or {}, "judges": judges or {}, "evaluators": {}, "total": total}
    if budget:
        record["budget"] = budget
    return record


def test_costs_in_one_line_without_prices():
    # The quickstart's judge calls: no price set anywhere.
    line = costs_summary(_costs(judges={"local-smollm2": {"calls": 121, "input_tokens": 33260, "output_tokens": 155,
                                                          "cost": None}},
                                total={"calls": 121, "input_tokens": 33260, "output_tokens": 155, "cost": None}))
    assert line == "121 calls · 33,260 input and 155 output tokens · no prices set"


def test_costs_in_one_line_with_a_price_on_one_host_and_a_budget():
    # The robustness demo: smollm2 priced (at 0), the python lookup host not.
    line = costs_summary(_costs(
        hosts={"lookup": {"calls": 29, "input_tokens": 0, "output_tokens": 0, "cost": None},
               "smollm2": {"calls": 28, "input_tokens": 844, "output_tokens": 396, "cost": 0.0}},
        total={"calls": 57, "input_tokens": 844, "output_tokens": 396, "cost": 0.0},
        budget={"max_cost": 0.3, "spent": 0.0, "stopped": False}))
    assert line == ("57 calls · 844 input and 396 output tokens · 0.0000 USD (no price for lookup) · "
                    "budget 0.3 USD, spent 0.0000 USD")
    one = costs_summary(_costs(hosts={"m": {"calls": 1, "input_tokens": 10, "output_tokens": 2, "cost": 0.0123}},
                               total={"calls": 1, "input_tokens": 10, "output_tokens": 2, "cost": 0.0123},
                               budget={"max_cost": 0.01, "spent": 0.0123, "stopped": True}))
    assert one == ("1 call · 10 input and 2 output tokens · 0.0123 USD · budget 0.01 USD, spent 0.0123 USD: "
                   "the budget stopped the run")


def _problem(severity, text):
    return {"severity": severity, "description": text}


def test_problems_summed_up_one_line_per_evaluator_most_severe_first():
    views = [
        {"display_name": "Text matching", "anchor": "ev-text_matching",
         "problems": [_problem("MEDIUM", "tm 1"), _problem("MEDIUM", "tm 2")]},
        {"display_name": "BLEU", "anchor": "ev-bleu",
         "problems": [_problem("MEDIUM", "b 1"), _problem("HIGH", "b 2"), _problem("HIGH", "b 3")]},
        {"display_name": "ROUGE", "anchor": "ev-rouge", "problems": [_problem("HIGH", "r 1"), _problem("LOW", "r 2")]},
        {"display_name": "Clean", "anchor": "ev-clean", "problems": []},
    ]
    core = [_problem("HIGH", "host x answered nothing")]
    found = lead_problems(["HIGH"], [[p["severity"] for p in v["problems"]] for v in views], limit=3)
    # The findings: which source's which problem leads each line (BLEU's first HIGH is its second problem).
    assert found == LeadProblems(total=8, sources=4, shown=(
        LeadLine("HIGH", 1, 1, "2 high · 1 medium"), LeadLine("HIGH", None, 0, "1 high"),
        LeadLine("HIGH", 2, 0, "1 high · 1 low")))
    lead = lead_view(views, core, found)
    assert (lead["total"], lead["sources"]) == (8, 4)
    # HIGH first; among them the most HIGH problems (BLEU: 2), then run order (the core's, then ROUGE).
    assert lead["shown"] == [
        {"severity": "HIGH", "evaluator": "BLEU", "anchor": "ev-bleu", "counts": "2 high · 1 medium", "description": "b 2"},
        {"severity": "HIGH", "evaluator": "Models under test", "anchor": "hosts", "counts": "1 high",
         "description": "host x answered nothing"},
        {"severity": "HIGH", "evaluator": "ROUGE", "anchor": "ev-rouge", "counts": "1 high · 1 low", "description": "r 1"},
    ]
    clean = [{"display_name": "Clean", "anchor": "x", "problems": []}]
    assert lead_problems([], [[]]) == LeadProblems(0, 0, ())
    assert lead_view(clean, [], lead_problems([], [[]])) == {"total": 0, "sources": 0, "shown": []}


def test_host_calls_split_the_test_suite_from_the_evaluators():
    # The robustness demo: 20 items each; smollm2 made 28 calls and answered 7 from the cache in all,
    # lookup 29 calls: the evaluator asked smollm2 8 (and 7 from the cache), lookup 9.
    pipeline = {"hosts": {"smollm2": {"items": 20, "answered": 20, "fetched": 20, "cached": 0, "resumed": 0, "failed": 0},
                          "lookup": {"items": 20, "answered": 20, "fetched": 20, "cached": 0, "resumed": 0, "failed": 0}}}
    hosts = {"smollm2": {"requests": 35, "cached": 7, "fetched": 28}, "lookup": {"requests": 29, "cached": 0, "fetched": 29}}
    assert host_calls(pipeline, hosts) == {"smollm2": {"evaluators_fetched": 8, "evaluators_cached": 7},
                                           "lookup": {"evaluators_fetched": 9, "evaluators_cached": 0}}
    assert host_calls(pipeline, {"smollm2": {"kind": "custom"}}) == {}  # a host without counters


def test_the_agent_demo_report_leads_with_its_point(tmp_path):
    result = sonar_core.run(REPO / "configs" / "agent_demo.yaml", output_dir=str(tmp_path), run_id="a", progress=False)
    html = (result.run_dir / "index.html").read_text(encoding="utf-8")
    assert "over 0" not in html
    assert re.search(r'<div class="muted">Model under test</div><div class="big" id="model-under-test">claims-agent</div>',
                     html)
    assert 'id="best-model"' not in html
    # The costs in one line, under the headline; the table further down, after the charts and problems.
    line = re.search(r'<p class="costs-line" id="costs-line"><b>Costs</b>: (.*?) \(<a href="#costs">', html).group(1)
    assert line == "9 calls · 0 input and 0 output tokens · no prices set"  # the agent's 9 host turns
    order = [html.index(marker) for marker in ('id="costs-line"', "<h2>At a glance</h2>", '<h2 id="problems">',
                                               '<h2 id="hosts">', '<h2 id="costs">', '<section id="ev-')]
    assert order == sorted(order)
    # The problems summed up: the planted weakness, one MEDIUM line.
    lead = re.search(r'<table class="problems" id="lead-problems">.*?</table>', html, re.S).group(0)
    assert lead.count("<tr>") == 2 and '<a href="#ev-tool_call_accuracy">Tool call accuracy</a>' in lead
    assert "Tool call accuracy is 0.9444, below the threshold 1 (1 of 3 test cases on the wrong side)" in lead
    record = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["result"]["overall_result"]["best_model"] is None
