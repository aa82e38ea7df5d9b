"""A scripted judge that answers ragas 0.4's prompts in the JSON shapes ragas asks for, by fixed rules.

Rules (sentences are the pieces of a text ending with '.'; "in the context" means the sentence,
without its final '.', is a case-insensitive substring of the joined context chunks):

* statement extraction (faithfulness, answer correctness): one statement per sentence of the answer;
  an answer holding ``GARBLE`` gets a reply that is not JSON (and so does ragas's format-fixing re-ask);
* claim verdicts (faithfulness): 1 when the statement is in the context;
* question generation (answer relevancy): an answer starting "I don't know" is noncommittal and
  regenerates the question; an answer starting "Off topic" gives ``OFF_TOPIC_QUESTION``; any other
  answer gives the question asked, word for word;
* chunk usefulness (context precision): 1 when a sentence of the expected answer is in the chunk;
* sentence attribution (context recall): 1 when the expected-answer sentence is in the context;
* context relevance ratings (both prompts): 2 when every chunk is useful (as above), 1 when some
  are, 0 when none is;
* correctness classification: TP = answer statements that are also expected-answer statements, FP =
  the other answer statements, FN = expected-answer statements not in the answer.

Used by tests/plugins/ragas and bench/bench_ragas.py (which serves it from a subprocess).
"""

from __future__ import annotations

import json
import re

OFF_TOPIC_QUESTION = "What is the weather like in Lyon today?"
NOT_JSON = "I would rather not say."


def sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def _in(sentence: str, text: str) -> bool:
    return sentence.rstrip(".").lower() in text.lower()


def _input(prompt: str) -> dict:
    """The JSON input ragas put after the last 'input: ' (its examples use 'Input: ')."""
    start = prompt.rindex("\ninput: ") + len("\ninput: ")
    end = prompt.rindex("\nOutput: ")
    return json.loads(prompt[start:end])


class RagasJudge:
    """``judge(prompt) -> answer`` for the rows of a dataset (dicts with ``input``, ``expected_output``,
    ``context`` and ``actual_output``): it knows which question each answer and context belong to."""

    def __init__(self, rows: list[dict]) -> None:
        self.question_of = {row["actual_output"]: row["input"] for row in rows}
        self.reference_of = {row["input"]: row["expected_output"] for row in rows}

    def _relevance_rating(self, prompt: str) -> str:
        question = re.search(r"### Question: (.*?)\n\n### Context: ", prompt, re.S)
        context = re.search(r"### Context: (.*?)\n\nDo not try to explain", prompt, re.S)
        assert question and context, "not a context relevance prompt"
        chunks = [c for c in context.group(1).split("\n") if c.strip()]
        reference = sentences(self.reference_of.get(question.group(1), ""))
        useful = [c for c in chunks if any(_in(s, c) for s in reference)]
        return "2" if len(useful) == len(chunks) else "1" if useful else "0"

    def __call__(self, prompt: str) -> str:
        try:
            return self.reply(prompt)
        except Exception as exc:  # a script bug must show in the test, not hang a client
            return f"script error: {type(exc).__name__}: {exc}"

    def reply(self, prompt: str) -> str:
        if prompt.startswith("The output string did not satisfy the constraints"):
            return NOT_JSON
        if "the Relevance score is" in prompt:
            return self._relevance_rating(prompt)
        return _answer(prompt, self.question_of)


def _answer(prompt: str, question_of: dict[str, str]) -> str:
    data = _input(prompt)
    if prompt.startswith("Given a question and an answer, analyze the complexity"):
        if "GARBLE" in data["answer"]:
            return NOT_JSON
        return json.dumps({"statements": sentences(data["answer"])})
    if prompt.startswith("Your task is to judge the faithfulness"):
        return json.dumps({"statements": [
            {"statement": s, "reason": "stated in the context" if _in(s, data["context"]) else "not in the context",
             "verdict": int(_in(s, data["context"]))} for s in data["statements"]]})
    if prompt.startswith("Generate a question for the given answer"):
        answer = data["response"]
        if answer.startswith("I don't know"):
            return json.dumps({"question": "What was asked?", "noncommittal": 1})
        if answer.startswith("Off topic"):
            return json.dumps({"question": OFF_TOPIC_QUESTION, "noncommittal": 0})
        return json.dumps({"question": question_of.get(answer, ""), "noncommittal": 0})
    if prompt.startswith("Given question, answer and context verify if the context was useful"):
        useful = any(_in(s, data["context"]) for s in sentences(data["answer"]))
        return json.dumps({"reason": "holds the answer" if useful else "unrelated", "verdict": int(useful)})
    if prompt.startswith("Given a context, and an answer, analyze each sentence"):
        return json.dumps({"classifications": [
            {"statement": s, "reason": "in the context" if _in(s, data["context"]) else "not in the context",
             "attributed": int(_in(s, data["context"]))} for s in sentences(data["answer"])]})
    if prompt.startswith("Given a ground truth and an answer statements"):
        truth = set(data["ground_truth"])
        return json.dumps({
            "TP": [{"statement": s, "reason": "in the ground truth"} for s in data["answer"] if s in truth],
            "FP": [{"statement": s, "reason": "not in the ground truth"} for s in data["answer"] if s not in truth],
            "FN": [{"statement": s, "reason": "missing from the answer"} for s in data["ground_truth"]
                   if s not in data["answer"]],
        })
    return NOT_JSON
