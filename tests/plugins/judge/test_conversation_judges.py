"""The conversation judges (goal_accuracy, conversation_relevancy, knowledge_retention, role_adherence)
against the scripted judge server: what the judge is shown (the transcript, the expected outcome),
verdicts per row, and calibration on each shipped set with a judge that knows every label."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from judge_server import JudgeServer, write_llm_configs

JUDGES = {  # id -> (pass label, fail label, pass metric)
    "goal_accuracy": ("achieved", "failed", "goal_achieved"),
    "conversation_relevancy": ("relevant", "irrelevant", "relevant_conversation"),
    "knowledge_retention": ("retained", "forgotten", "knowledge_retained"),
    "role_adherence": ("kept", "broken", "role_kept"),
}
GOOD = [{"role": "system", "content": "You are a claims assistant."},
        {"role": "user", "content": "My policy is NW-1001. Is theft covered?"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup_policy", "arguments": {"policy_id": "NW-1001"}}]},
        {"role": "tool", "content": "theft covered", "name": "lookup_policy"},
        {"role": "assistant", "content": "Yes, NW-1001 covers theft <b>fully</b>."}]
BAD = GOOD[:2] + [{"role": "assistant", "content": "Let me tell you about our car insurance instead."}]


def _reply(prompt: str) -> str:
    # The good conversation passes every judge, the bad one fails it: the judge's words by id.
    judge = next(j for j, (_, _, _) in JUDGES.items() if {"goal_accuracy": "[BEGIN OUTCOME]",
                                                           "conversation_relevancy": "drift to something",
                                                           "knowledge_retention": "facts the user stated",
                                                           "role_adherence": "role, the persona"}[j] in prompt)
    good, bad, _ = JUDGES[judge]
    return good if "covers theft" in prompt else bad


def test_each_judge_sees_the_transcript_and_scores_each_row(tmp_path):
    data = tmp_path / "d.jsonl"
    rows = [{"test_case_key": "good", "model_key": "m", "conversation": GOOD, "expected_outcome": "The user learns theft is covered."},
            {"test_case_key": "bad", "model_key": "m", "conversation": BAD, "expected_outcome": "The user learns theft is covered."}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with JudgeServer(default=_reply) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = sonar_core.run(dataset=str(data), evaluators=list(JUDGES), output_dir=str(tmp_path / "out"), run_id="r",
                                llm_configs=str(configs), llm_cache=str(tmp_path / "c.sqlite"), calibrate=False,
                                progress=False)
        prompts = [c.prompt for c in server.requests]
    assert result.status == "success", result.message
    assert len(prompts) == 8
    goal = next(p for p in prompts if "[BEGIN OUTCOME]" in p and "covers theft" in p)
    assert ("[turn 0] system: You are a claims assistant.\n"
            "[turn 1] user: My policy is NW-1001. Is theft covered?\n"
            '[turn 2] assistant: calls lookup_policy({"policy_id": "NW-1001"})\n'
            "[turn 3] tool lookup_policy: theft covered\n"
            "[turn 4] assistant: Yes, NW-1001 covers theft <b>fully</b>.") in goal
    assert "[BEGIN OUTCOME]\nThe user learns theft is covered.\n[END OUTCOME]" in goal
    record = json.loads((result.run_dir / names.RUN_JSON).read_text())
    for judge, (_, _, metric) in JUDGES.items():
        entry = next(e for e in record["result"]["executed_explainers"] if e["evaluator_id"] == judge)
        records = json.loads((result.run_dir / entry["job_location"] / names.EVAL_RESULTS / "application_json" /
                              "explanation.json").read_text())["results"]
        assert {r["test_case_key"]: r[metric] for r in records} == {"good": 1.0, "bad": 0.0}, judge


def test_a_row_without_an_expected_outcome_is_skipped_by_goal_accuracy(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"test_case_key": "x", "conversation": GOOD, "expected_outcome": "ok"}) + "\n"
                    + json.dumps({"test_case_key": "y", "conversation": GOOD}) + "\n", encoding="utf-8")
    with JudgeServer(default="achieved") as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = sonar_core.run(dataset=str(data), evaluators=["goal_accuracy"], output_dir=str(tmp_path / "out"),
                                run_id="r", llm_configs=str(configs), calibrate=False, progress=False)
        assert server.calls == 1
    assert result.status == "success"


def _set_labels() -> dict[str, str]:
    """Each shipped conversation item's transcript -> its label (the judge that knows every answer)."""
    from sonar_core.conversation import transcript_text
    from sonar_core.llm.calibration_sets import load_calibration_set

    folder = resources.files("sonar_plugins.judge") / "calibration"
    labels = {}
    for judge in JUDGES:
        for item in load_calibration_set(str(folder / f"{judge}.jsonl"), judge).items:
            labels[(judge, transcript_text(list(item.conversation)))] = item.label
    return labels


@pytest.mark.parametrize("judge", list(JUDGES))
def test_a_judge_that_knows_every_label_calibrates_to_kappa_one(tmp_path, judge):
    labels = _set_labels()

    def knowing(prompt: str) -> str:
        return next(label for (j, text), label in labels.items() if j == judge and text in prompt)

    with JudgeServer(default=knowing) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = CliRunner().invoke(cli, ["judges", "calibrate", "-e", judge, "--llm-configs", str(configs),
                                          "--llm-cache", str(tmp_path / "c.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    (measured,) = json.loads(result.output)["results"]
    assert (measured["items"], measured["accuracy"], measured["kappa"]) == (40, 1.0, 1.0)
