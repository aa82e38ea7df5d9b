"""Conversation relevancy (judge): is each assistant turn relevant to the turns before it?"""

from __future__ import annotations

from sonar_core import Input, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote

PROMPT = """\
You are reviewing a conversation between a user and an AI assistant (turns are numbered; tool turns \
show what the assistant's tools returned).
[BEGIN CONVERSATION]
{{CONVERSATION}}
[END CONVERSATION]

Check every assistant turn against the turns before it: does it respond to what the user asked or \
said at that point (a clarifying question, a tool call that serves the request and an honest refusal \
all count as relevant), or does it drift to something the user did not ask about, answer a different \
question, or ignore the user's last message? Answer with one word: "relevant" if every assistant turn \
is relevant, "irrelevant" if at least one is not."""


class ConversationRelevancyEvaluator(JudgeEvaluator):
    """Pass when the judge answers "relevant"; "irrelevant" fails the row."""

    id = "conversation_relevancy"
    display_name = "Conversation Relevancy (Judge)"
    tagline = "An LLM judge checks that every assistant turn answers the turns before it."
    description = (
        "Shows the LLM judge the whole conversation and asks whether each assistant turn responds to "
        "what came before it: the user's latest message in the light of the earlier ones. Clarifying "
        "questions, tool calls that serve the request and honest refusals are relevant; drifting to "
        "another topic, answering a different question or ignoring the last message is not. The judge "
        "answers `relevant` (the row passes) or `irrelevant` (one turn or more is not; the row fails)."
    )
    required_inputs = (Input.CONVERSATION,)
    compatibility = ("llm",)
    prompt_template = PROMPT
    labels = ("relevant", "irrelevant")
    calibration_labels = {True: "relevant", False: "irrelevant"}
    category = "Agent"
    metrics = judge_metrics(
        passes=("relevant_conversation", "Relevant conversation (pass)"),
        fails=("irrelevant_conversation", "Irrelevant conversation (fail)"),
        retrieval=("conversation_relevancy_retrieval_failures", "Conversation relevancy retrieval failures"),
        generation=("conversation_relevancy_generation_failures", "Conversation relevancy generation failures"),
        parse=("conversation_relevancy_parsing_failures", "Conversation relevancy parsing failures"),
        what="as relevant in every assistant turn",
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"relevant": True, "irrelevant": False},
                            {"relevant": "every assistant turn is relevant",
                             "irrelevant": "an assistant turn is not relevant to the turns before it"})
