"""Step Alignment and Completeness end to end: steps extracted, embedded, matched and aligned."""

from __future__ import annotations

import pytest

from sonar_core import Input
from sonar_core.testing import make_context

from semantic_helpers import cosine, evaluator, row
from sonar_plugins.semantic.step_alignment import StepAlignmentCompletenessEvaluator as StepAlignment

CONTEXT = ["Claims are paid within 10 days.",
           "To file a claim:\n1. Open the Northwind app.\n2. Tap Claims.\n3. Upload photos of the damage.\n"
           "4. Submit the claim."]
CONTEXT_STEPS = ["Open the Northwind app.", "Tap Claims.", "Upload photos of the damage.", "Submit the claim."]


@pytest.fixture(scope="module")
def ctx():
    return make_context(device="cpu")


def test_declaration_follows_the_catalogue():
    assert StepAlignment.id == "step_alignment_completeness"
    assert StepAlignment.required_inputs == (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    assert [(m.key, m.higher_is_better, m.threshold, m.value_range) for m in StepAlignment.metrics] == [
        ("edits", False, 0.75, (0.0, float("inf"))), ("insertions", False, 0.75, (0.0, float("inf"))),
        ("deletions", False, 0.75, (0.0, float("inf"))), ("mismatches", False, 0.75, (0.0, float("inf"))),
        ("retrieved_context_steps", True, 0.75, (0.0, float("inf"))),
        ("actual_answer_steps", True, 0.75, (0.0, float("inf")))]
    assert StepAlignment.primary_metric().key == "edits"
    assert StepAlignment.validate_params({})["similarity_cutoff"] == 0.7


def test_the_same_steps_need_no_edit(ctx):
    answer = "\n".join(f"- {step}" for step in CONTEXT_STEPS)
    [result] = evaluator(StepAlignment, ctx).evaluate([row(context=CONTEXT, actual_output=answer)])
    assert result.values == {"edits": 0.0, "insertions": 0.0, "deletions": 0.0, "mismatches": 0.0,
                             "retrieved_context_steps": 4.0, "actual_answer_steps": 4.0}
    assert result.error_message is None


def test_a_missing_and_an_extra_step_are_counted_by_hand(ctx):
    # The answer skips "Tap Claims." and adds a step of its own.
    answer = ("First, open the Northwind app. Then upload photos of the damage. Then bake a chocolate cake. "
              "Finally, submit the claim.")
    answer_steps = ["open the Northwind app.", "upload photos of the damage.", "bake a chocolate cake.",
                    "submit the claim."]
    # What makes the hand count hold: each kept step matches its context step, nothing else does.
    for kept, original in ((0, 0), (1, 2), (3, 3)):
        assert cosine(answer_steps[kept], CONTEXT_STEPS[original]) >= 0.7
    assert max(cosine(step, "Tap Claims.") for step in answer_steps) < 0.7
    assert max(cosine("bake a chocolate cake.", step) for step in CONTEXT_STEPS) < 0.7
    [result] = evaluator(StepAlignment, ctx).evaluate([row(context=CONTEXT, actual_output=answer)])
    assert result.values == {"edits": 2.0, "insertions": 1.0, "deletions": 1.0, "mismatches": 0.0,
                             "retrieved_context_steps": 4.0, "actual_answer_steps": 4.0}
    assert result.error_message == "2 edit(s): missing step 'Tap Claims.'; extra step 'bake a chocolate cake.'"
    assert result.details["context_steps"] == CONTEXT_STEPS and result.details["context_steps_from"] == "list"
    assert result.details["answer_steps"] == answer_steps and result.details["answer_steps_from"] == "sequence"
    assert [(a["op"], a["context_step"], a["answer_step"]) for a in result.details["alignment"]] == [
        ("match", 0, 0), ("insertion", 1, None), ("match", 2, 1), ("deletion", None, 2), ("match", 3, 3)]


def test_a_different_step_in_place_is_a_mismatch_and_the_cutoff_is_a_parameter(ctx):
    answer = "1. Open the Northwind app.\n2. Call your agent.\n3. Upload photos of the damage.\n4. Submit the claim."
    assert cosine("Call your agent.", "Tap Claims.") < 0.7
    [result] = evaluator(StepAlignment, ctx).evaluate([row(context=CONTEXT, actual_output=answer)])
    assert (result.values["edits"], result.values["mismatches"]) == (1.0, 1.0)
    similarity = cosine("Call your agent.", "Tap Claims.")
    assert result.error_message == f"1 edit(s): 'Call your agent.' in place of 'Tap Claims.' ({similarity:.2f})"
    # A cut-off below that similarity makes the two the same step.
    [lenient] = evaluator(StepAlignment, ctx, similarity_cutoff=similarity - 0.01).evaluate(
        [row(context=CONTEXT, actual_output=answer)])
    assert lenient.values["edits"] == 0.0
