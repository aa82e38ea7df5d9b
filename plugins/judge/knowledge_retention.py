"""Knowledge retention (judge): does the assistant keep what the user told it earlier?"""

from __future__ import annotations

from sonar_core import Input, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

PROMPT = """\
You are reviewing a conversation between a user and an AI assistant (turns are numbered).
[BEGIN CONVERSATION]
{{CONVERSATION}}
[END CONVERSATION]

List to yourself the facts the user stated (names, numbers, dates, preferences, constraints). Then \
check every later assistant turn: does it contradict one of those facts, ask again for something the \
user already gave, or act as if the user had not said it? A fact the user later corrected counts in \
its corrected form. Answer with one word: "retained" if the assistant kept everything the user said, \
"forgotten" if it contradicted or forgot something."""


class KnowledgeRetentionEvaluator(JudgeEvaluator):
    """Pass when the judge answers "retained"; "forgotten" fails the row."""

    id = "knowledge_retention"
    display_name = "Knowledge Retention (Judge)"
    tagline = "An LLM judge checks that the assistant does not forget or contradict what the user said."
    description = (
        "Shows the LLM judge the whole conversation and asks whether any assistant turn contradicts a "
        "fact the user stated earlier (a name, a number, a date, a preference, a constraint), asks again "
        "for something already given, or proceeds as if it had not been said; a fact the user corrected "
        "counts as corrected. The judge answers `retained` (the row passes) or `forgotten` (it fails)."
    )
    required_inputs = (Input.CONVERSATION,)
    compatibility = ("llm",)
    prompt_template = PROMPT
    labels = ("retained", "forgotten")
    calibration_labels = {True: "retained", False: "forgotten"}
    category = "Agent"
    metrics = judge_metrics(
        passes=("knowledge_retained", "Knowledge retained (pass)"),
        fails=("knowledge_forgotten", "Knowledge forgotten (fail)"),
        retrieval=("knowledge_retention_retrieval_failures", "Knowledge retention retrieval failures"),
        generation=("knowledge_retention_generation_failures", "Knowledge retention generation failures"),
        parse=("knowledge_retention_parsing_failures", "Knowledge retention parsing failures"),
        what="as keeping what the user said",
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"retained": True, "forgotten": False},
                            {"retained": "the assistant kept what the user said",
                             "forgotten": "the assistant contradicted or forgot what the user said"})
