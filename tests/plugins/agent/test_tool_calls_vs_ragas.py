"""tool_call_accuracy and tool_call_f1 equal ragas 0.4's ToolCallAccuracy and ToolCallF1 on generated
conversations that cover every edge case; trajectory_match by hand in every mode."""

from __future__ import annotations

import asyncio
import os
import random

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from sonar_core.testing import make_row, score_rows
from sonar_plugins.agent.tool_call_accuracy import ToolCallAccuracyEvaluator
from sonar_plugins.agent.tool_call_f1 import ToolCallF1Evaluator
from sonar_plugins.agent.trajectory_match import TrajectoryMatchEvaluator

TOOLS = ["lookup_policy", "file_claim", "get_weather", "search"]
# Values whose text or equality is a trap: 1 / 1.0 / True (equal in a set, different as text),
# nested objects and lists, argument order, an empty string.
VALUES = ["P-1", "P-2", 1, 1.0, True, 0, "", None, [1, 2], [2, 1], {"a": 1, "b": [1]}, {"b": [1], "a": 1}, "theft"]
ARG_NAMES = ["id", "kind", "city", "q"]


def _call(rng: random.Random) -> dict:
    names = rng.sample(ARG_NAMES, rng.randint(0, 3))
    return {"name": rng.choice(TOOLS), "arguments": {n: rng.choice(VALUES) for n in names}}


def _mutate(call: dict, rng: random.Random) -> dict:
    """A near copy of a reference call: same, another value, a missing or extra argument, another name."""
    arguments = dict(call["arguments"])
    kind = rng.randrange(6)
    if kind == 1 and arguments:
        arguments[rng.choice(list(arguments))] = rng.choice(VALUES)
    elif kind == 2 and arguments:
        del arguments[rng.choice(list(arguments))]
    elif kind == 3:
        arguments[rng.choice(ARG_NAMES)] = rng.choice(VALUES)
    elif kind == 4:
        return {"name": rng.choice(TOOLS), "arguments": arguments}
    elif kind == 5:
        arguments = dict(reversed(list(arguments.items())))  # the same arguments in another order
    return {"name": call["name"], "arguments": arguments}


def _case(rng: random.Random, index: int) -> tuple[list[dict], list[dict]]:
    """(conversation, expected calls); the first cases are the named edge cases."""
    edge = index % 10
    reference = [_call(rng) for _ in range(rng.randint(1, 4))]
    if edge == 0:
        predicted_calls, reference = [], []                     # no calls on either side
    elif edge == 1:
        predicted_calls = []                                    # no predicted calls
    elif edge == 2:
        predicted_calls, reference = [_call(rng) for _ in range(rng.randint(1, 3))], []  # no reference calls
    elif edge == 3:
        predicted_calls = [dict(c) for c in reference]          # exact
    elif edge == 4:
        predicted_calls = [dict(c) for c in reference][: rng.randint(1, len(reference))]  # too few
    elif edge == 5:
        predicted_calls = [dict(c) for c in reference] + [_call(rng) for _ in range(rng.randint(1, 2))]  # too many
    elif edge == 6:
        predicted_calls = rng.sample(reference, len(reference))  # another order
    elif edge == 7:
        predicted_calls = [dict(c) for c in reference] + [dict(reference[0])]  # a repeated call
    else:
        predicted_calls = [_mutate(c, rng) for c in reference]
    # Spread the calls over assistant turns (one or two calls each), with tool results between them.
    conversation = [{"role": "system", "content": "You handle claims."}, {"role": "user", "content": f"case {index}"}]
    pending = list(predicted_calls)
    while pending:
        take = pending[: rng.randint(1, 2)]
        pending = pending[len(take):]
        conversation.append({"role": "assistant", "content": rng.choice(["", "checking"]), "tool_calls": take})
        conversation += [{"role": "tool", "content": f"result of {c['name']}"} for c in take]
    conversation.append({"role": "assistant", "content": "done"})
    return conversation, reference


def _ragas_sample(conversation: list[dict], reference: list[dict]):
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    messages = []
    for turn in conversation:
        if turn["role"] == "user":
            messages.append(HumanMessage(content=turn["content"]))
        elif turn["role"] == "assistant":
            calls = [ToolCall(name=c["name"], args=c["arguments"]) for c in turn.get("tool_calls", [])]
            messages.append(AIMessage(content=turn["content"], tool_calls=calls or None))
        elif turn["role"] == "tool":
            messages.append(ToolMessage(content=turn["content"]))
    return MultiTurnSample(user_input=messages,
                           reference_tool_calls=[ToolCall(name=c["name"], args=c["arguments"]) for c in reference])


N = 600


@pytest.fixture(scope="module")
def generated():
    rng = random.Random(24)
    cases = [_case(rng, i) for i in range(N)]
    rows = [make_row(key=f"c{i}", conversation=conv, expected_tool_calls=ref) for i, (conv, ref) in enumerate(cases)]
    samples = [_ragas_sample(conv, ref) for conv, ref in cases]
    return cases, rows, samples


def _ragas_scores(metric, samples) -> list[float]:
    import warnings

    async def all_scores():
        return [await metric._multi_turn_ascore(sample, None) for sample in samples]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ragas warns on every length mismatch
        return asyncio.run(all_scores())


@pytest.mark.parametrize("strict_order", [True, False])
def test_tool_call_accuracy_equals_ragas(generated, strict_order):
    from ragas.metrics import ToolCallAccuracy

    cases, rows, samples = generated
    expected = _ragas_scores(ToolCallAccuracy(strict_order=strict_order), samples)
    ours = [r.values["tool_call_accuracy"] for r in score_rows(ToolCallAccuracyEvaluator, rows,
                                                                strict_order=strict_order)]
    assert ours == expected  # exact float equality, row by row
    # Every edge case occurred, and the scores are not all alike.
    assert {0.0, 1.0} <= set(ours) and any(0 < v < 1 for v in ours)
    assert sum(1 for conv, ref in cases if not ref and not any(t.get("tool_calls") for t in conv)) >= 50


def test_tool_call_f1_equals_ragas(generated):
    from ragas.metrics import ToolCallF1

    _, rows, samples = generated
    expected = _ragas_scores(ToolCallF1(), samples)
    ours = [r.values["tool_call_f1"] for r in score_rows(ToolCallF1Evaluator, rows)]
    assert ours == expected
    assert {0.0, 1.0} <= set(ours) and any(0 < v < 1 for v in ours)


def test_tool_call_accuracy_by_hand():
    ref = [{"name": "lookup_policy", "arguments": {"id": "P-1", "kind": "theft"}},
           {"name": "file_claim", "arguments": {"kind": "theft"}}]
    conv = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup_policy", "arguments": {"id": "P-1"}}]}]
    row = make_row(key="r", conversation=conv, expected_tool_calls=ref)
    # One of two calls compared: (1/2 argument) / 2 reference calls, times coverage 1/2; names not aligned -> 0.
    assert score_rows(ToolCallAccuracyEvaluator, [row])[0].values == {"tool_call_accuracy": 0.0}
    conv[1]["tool_calls"].append({"name": "file_claim", "arguments": {"kind": "theft", "extra": 1}})
    row = make_row(key="r", conversation=conv, expected_tool_calls=ref)
    # Aligned: (0.5 + 1.0) / 2.
    assert score_rows(ToolCallAccuracyEvaluator, [row])[0].values == {"tool_call_accuracy": 0.75}
    # F1: no call equals its reference exactly -> 0; with the first fixed, P = R = 1/2.
    assert score_rows(ToolCallF1Evaluator, [row])[0].values == {"tool_call_f1": 0.0}
    conv[1]["tool_calls"][0]["arguments"]["kind"] = "theft"
    row = make_row(key="r", conversation=conv, expected_tool_calls=ref)
    assert score_rows(ToolCallF1Evaluator, [row])[0].values == {"tool_call_f1": 0.5}


def _names_row(called: list[str], expected: list[str]):
    conv = [{"role": "user", "content": "q"}]
    conv += [{"role": "assistant", "content": "", "tool_calls": [{"name": n, "arguments": {}}]} for n in called]
    conv.append({"role": "assistant", "content": "done"})
    return make_row(key="r", conversation=conv, expected_tool_calls=[{"name": n, "arguments": {}} for n in expected])


# (called, expected) -> strict, unordered, subset, superset; worked out by hand.
TRAJECTORIES = [
    (["a", "b"], ["a", "b"], (1, 1, 1, 1)),
    (["b", "a"], ["a", "b"], (0, 1, 1, 1)),
    (["a"], ["a", "b"], (0, 0, 1, 0)),             # a missing call: subset only
    (["a", "b", "c"], ["a", "b"], (0, 0, 0, 1)),   # an extra call: superset only
    (["a", "a"], ["a"], (0, 0, 0, 1)),             # a repeat counts: not a subset
    (["a"], ["a", "a"], (0, 0, 1, 0)),
    (["c"], ["a", "b"], (0, 0, 0, 0)),
    ([], [], (1, 1, 1, 1)),
    ([], ["a"], (0, 0, 1, 0)),
    (["a"], [], (0, 0, 0, 1)),
]


@pytest.mark.parametrize("called, expected, want", TRAJECTORIES)
def test_trajectory_match_in_every_mode(called, expected, want):
    row = _names_row(called, expected)
    got = tuple(score_rows(TrajectoryMatchEvaluator, [row], mode=mode)[0].values["trajectory_match"]
                for mode in ("strict", "unordered", "subset", "superset"))
    assert got == want


def test_trajectory_mode_must_be_known():
    from sonar_core import ParameterError

    with pytest.raises(ParameterError, match="mode"):
        TrajectoryMatchEvaluator.validate_params({"mode": "loose"})
