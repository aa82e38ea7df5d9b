"""Goal accuracy (judge): did the conversation achieve what it should have?"""

from __future__ import annotations

from sonar_core import Input, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

PROMPT = """\
You are reviewing a conversation between a user and an AI assistant (turns are numbered; tool turns \
show what the assistant's tools returned).
[BEGIN CONVERSATION]
{{CONVERSATION}}
[END CONVERSATION]

The conversation should achieve this outcome:
[BEGIN OUTCOME]
{{EXPECTED_OUTCOME}}
[END OUTCOME]

Judge only what actually happened in the conversation: an outcome the assistant merely promises, or \
claims without the tool call or information that would make it true, is not achieved. Answer with one \
word: "achieved" if the conversation reached the outcome, "failed" if it did not."""


class GoalAccuracyEvaluator(JudgeEvaluator):
    """Pass when the judge answers "achieved"; "failed" fails the row."""

    id = "goal_accuracy"
    display_name = "Goal Accuracy (Judge)"
    tagline = "An LLM judge decides whether a conversation achieved its expected outcome."
    description = (
        "Shows the LLM judge the whole conversation (every turn, tool calls and tool results included) "
        "and the row's `expected_outcome`, and asks whether the conversation actually reached that "
        "outcome: what the assistant did and what the tools returned count, promises and unsupported "
        "claims do not. The judge answers `achieved` (the row passes) or `failed` (it fails); any other "
        "answer is a parse failure, kept in the row's `judge_answers`."
    )
    required_inputs = (Input.CONVERSATION, Input.EXPECTED_OUTCOME)
    compatibility = ("llm",)
    prompt_template = PROMPT
    labels = ("achieved", "failed")
    calibration_labels = {True: "achieved", False: "failed"}
    category = "Agent"
    metrics = judge_metrics(
        passes=("goal_achieved", "Goal achieved (pass)"),
        fails=("goal_failed", "Goal failed (fail)"),
        retrieval=("goal_retrieval_failures", "Goal retrieval failures"),
        generation=("goal_generation_failures", "Goal generation failures"),
        parse=("goal_parsing_failures", "Goal parsing failures"),
        what="as reaching the expected outcome",
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"achieved": True, "failed": False},
                            {"achieved": "the outcome was achieved", "failed": "the outcome was not achieved"})
