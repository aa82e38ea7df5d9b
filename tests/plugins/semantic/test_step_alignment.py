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


# -- LLM step extraction (step_extraction: judge) ---------------------------------------------------

# Prose: no list, no inline numbers, no sequence words, so the heuristic takes it as one sentence-step.
PROSE_CONTEXT = ["To file a claim you open the Northwind app and tap Claims, and once you have uploaded photos of "
                 "the damage you submit the claim."]
PROSE_ANSWER = "Open the Northwind app, upload photos of the damage and submit the claim."


def _extraction_reply(prompt: str) -> str:
    if "you open the Northwind app and tap Claims" in prompt:
        return "1. Open the Northwind app.\n2. Tap Claims.\n3. Upload photos of the damage.\n4. Submit the claim."
    if PROSE_ANSWER in prompt:
        return "Here are the steps:\n1. Open the Northwind app.\n2. Upload photos of the damage.\n3. Submit the claim."
    return "I cannot tell."


def test_judge_extraction_finds_the_steps_the_heuristic_cannot(tmp_path):
    import json

    import sonar_core
    from sonar_core import names

    from judge_server import JudgeServer, write_llm_configs

    rows = [{"test_case_key": "prose", "model_key": "m", "context": PROSE_CONTEXT, "actual_output": PROSE_ANSWER},
            {"test_case_key": "unread", "model_key": "m", "context": CONTEXT,
             "actual_output": "\n".join(f"- {step}" for step in CONTEXT_STEPS)}]
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    results = {}
    for extraction in ("heuristic", "judge"):
        with JudgeServer(default=_extraction_reply) as server:
            run = sonar_core.run(dataset=str(dataset), output_dir=str(tmp_path / extraction), run_id="r",
                                 llm_configs=str(write_llm_configs(tmp_path / "llm.yaml", server.base_url)),
                                 evaluators=[{"id": "step_alignment_completeness",
                                              "params": {"step_extraction": extraction}}])
            # one call per distinct text with the judge (two contexts, two answers), none without
            assert server.calls == (4 if extraction == "judge" else 0)
        assert run.status == "success", run.message
        (folder,) = run.run_dir.glob("explainer_*")
        data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
        results[extraction] = {r["test_case_key"]: r for r in data["results"]}
    heuristic, judged = results["heuristic"]["prose"], results["judge"]["prose"]
    assert (heuristic["retrieved_context_steps"], heuristic["details"]["context_steps_from"]) == (1.0, "sentences")
    # the judge's steps are the context's four and the answer's three, word for word (cosine 1):
    # "Tap Claims." is missing -> 1 insertion, 1 edit
    assert judged["details"]["context_steps"] == CONTEXT_STEPS
    assert judged["details"]["answer_steps"] == ["Open the Northwind app.", "Upload photos of the damage.",
                                                 "Submit the claim."]
    assert judged["details"]["context_steps_from"] == judged["details"]["answer_steps_from"] == "judge"
    assert (judged["edits"], judged["insertions"], judged["deletions"], judged["mismatches"]) == (1.0, 1.0, 0.0, 0.0)
    assert (judged["retrieved_context_steps"], judged["actual_answer_steps"]) == (4.0, 3.0)
    assert judged["result_error_message"] == "1 edit(s): missing step 'Tap Claims.'"
    # an unreadable answer leaves that text to the heuristic, which says so; the numbers are the heuristic's
    unread = results["judge"]["unread"]
    assert unread["details"]["context_steps_from"] == "list (the judge's answer listed no steps)"
    assert unread["edits"] == results["heuristic"]["unread"]["edits"] == 0.0


def test_sentence_level_metrics_put_each_answer_step_in_actual_output_meta(ctx):
    answer = ("First, open the Northwind app. Then upload photos of the damage. Then bake a chocolate cake. "
              "Finally, submit the claim.")
    [result] = evaluator(StepAlignment, ctx).evaluate([row(context=CONTEXT, actual_output=answer)])
    (meta,) = result.actual_output_meta
    assert [(d["text"], d["meta"]["alignment"], d["meta"]["context_step"]) for d in meta["data"]] == [
        ("open the Northwind app.", "match", "Open the Northwind app."),
        ("upload photos of the damage.", "match", "Upload photos of the damage."),
        ("bake a chocolate cake.", "deletion", None),
        ("submit the claim.", "match", "Submit the claim.")]
    assert meta["data"][0]["metrics"]["step_similarity"] == pytest.approx(cosine("open the Northwind app.",
                                                                                "Open the Northwind app."), abs=1e-5)
    [off] = evaluator(StepAlignment, ctx, sentence_level_metrics=False).evaluate(
        [row(context=CONTEXT, actual_output=answer)])
    assert off.actual_output_meta is None and off.values == result.values
