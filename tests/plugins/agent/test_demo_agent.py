"""The demo's claims-assistant conversations (sonar_core/demo/cases/agent.json) scored by the agent
evaluators, each value worked out by hand from the case file."""

from __future__ import annotations

import pytest

from sonar_core.config import DEMO_DATASET
from sonar_core.dataset import load_dataset
from sonar_core.demo.generate import OUTPUT
from sonar_core.testing import score_rows
from sonar_plugins.agent.tool_call_accuracy import ToolCallAccuracyEvaluator
from sonar_plugins.agent.tool_call_f1 import ToolCallF1Evaluator
from sonar_plugins.agent.trajectory_match import TrajectoryMatchEvaluator

# (case, model) -> (accuracy, f1, strict trajectory, superset trajectory)
EXPECTED = {
    ("agent-theft-claim", "acme-gpt-large"): (1.0, 1.0, 1.0, 1.0),
    # file_claim's amount is wrong: (1 + 2/3) / 2; one of two calls exact: F1 0.5.
    ("agent-theft-claim", "llama-3.1-8b-rag"): (5 / 6, 0.5, 1.0, 1.0),
    # Never looked the policy up: names misaligned; no call exact.
    ("agent-theft-claim", "mistral-7b-chat"): (0.0, 0.0, 0.0, 0.0),
    ("agent-water-cover", "acme-gpt-large"): (1.0, 1.0, 1.0, 1.0),
    # An extra file_claim: misaligned; P = 1/2, R = 1, F1 = 2/3 rounded.
    ("agent-water-cover", "llama-3.1-8b-rag"): (0.0, 0.6667, 0.0, 1.0),
    ("agent-water-cover", "mistral-7b-chat"): (0.0, 0.0, 0.0, 0.0),
    # The home policy read first: 3 calls for 2; P = 2/3, R = 1, F1 = 0.8.
    ("agent-hail-car", "acme-gpt-large"): (0.0, 0.8, 0.0, 1.0),
    ("agent-hail-car", "llama-3.1-8b-rag"): (1.0, 1.0, 1.0, 1.0),
    # The right calls in the wrong order: F1 ignores order, strict does not.
    ("agent-hail-car", "mistral-7b-chat"): (0.0, 1.0, 0.0, 1.0),
}


def test_demo_conversations_score_as_worked_out():
    assert DEMO_DATASET == "demo"
    rows = [r for r in load_dataset(OUTPUT).rows if "agent" in r.categories]
    assert len(rows) == 9
    # input and actual answer come from the conversation.
    theft = next(r for r in rows if r.key == "agent-theft-claim::acme-gpt-large")
    assert theft.input.startswith("My bike was stolen") and theft.actual_output.startswith("Done: claim CL-5521")
    results = [score_rows(ToolCallAccuracyEvaluator, rows), score_rows(ToolCallF1Evaluator, rows),
               score_rows(TrajectoryMatchEvaluator, rows), score_rows(TrajectoryMatchEvaluator, rows, mode="superset")]
    got = {(r.test_case_key, r.model_key): tuple(next(iter(res[i].values.values())) for res in results)
           for i, r in enumerate(rows)}
    assert got.keys() == EXPECTED.keys()
    for key, want in EXPECTED.items():
        assert got[key] == pytest.approx(want, abs=1e-12), key
