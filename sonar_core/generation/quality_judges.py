"""The two judged quality checks of a generated item, as judge evaluators (so calibration measures them).

* :class:`GroundednessCheck` (``generation_groundedness``): is every claim of the reference answer
  stated in the item's cited passages? ``yes`` passes.
* :class:`AnswerabilityCheck` (``generation_answerability``): can the question be answered from the
  passages alone? ``yes`` passes. For an *unanswerable* item the passages are the corpus's chunks
  most similar to its question, and the item is good when the judge says ``no``.

Both ask about ``batch_size`` items in one prompt (one line ``<n>: yes|no`` per item), so judging
costs about ``1 / batch_size`` calls per item and check instead of one. Each class is a
:class:`~sonar_core.judge_evaluator.JudgeEvaluator` with a labelled calibration set next to this module
(``calibration/<id>.jsonl``): :func:`sonar_core.llm.calibration.calibrate` runs the same batched
prompt over the set, so the figures measure the prompt that scores the items. These classes are the
generator's own; they are not registered as plugins and do not appear in ``sonar evaluators``.
"""

from __future__ import annotations

import re
from typing import ClassVar, Iterable, Sequence

from ..contract import Input, Param, RowResult
from ..dataset import Row
from ..judge_evaluator import JUDGE_PARAMETERS, JudgeEvaluator, JudgeVote, judge_metrics, keyword_vote
from ..llm.requests import Completion
from .records import CheckedItem

__all__ = ["GroundednessCheck", "AnswerabilityCheck", "QUALITY_CHECKS"]

_LINE = re.compile(r"^\W*(?:item\s*)?(\d+)\s*[:.)\-=]\s*\**\s*([A-Za-z]+)", re.IGNORECASE | re.MULTILINE)


class _BatchedCheck(JudgeEvaluator):
    """Several items in one judge prompt; each item's line is read as its own answer."""

    header: ClassVar[str] = ""
    question_line: ClassVar[str] = ""
    labels = ()
    calibration_labels = {True: "yes", False: "no"}
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER, Input.RETRIEVED_CONTEXT)
    compatibility = ("llm", "rag")
    answer_max_tokens = 6
    parameters: ClassVar[tuple[Param, ...]] = JUDGE_PARAMETERS + (
        Param("batch_size", int, 8, "Items judged in one prompt.", min=1, max=32),
    )

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"yes": True, "no": False})

    def template(self) -> str:
        return f"{self.header}\n{self.prompt_template}\n{self.question_line}"

    def _block(self, number: int, row: Row) -> str:
        passages = "\n".join(f"- {text.strip()}" for text in row.context)
        return (f"ITEM {number}\nPASSAGES:\n{passages}\nQUESTION: {row.input.strip()}\n"
                f"ANSWER: {row.actual_output.strip()}\n")

    def batch_prompt(self, rows: Sequence[Row]) -> str:
        blocks = "\n".join(self._block(n, row) for n, row in enumerate(rows, start=1))
        return f"{self.header}\n\n{blocks}\n{self.question_line}\nReply with one line per item, " \
               f"'<item number>: yes' or '<item number>: no', and nothing else."

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        from ..llm import LLMRequest

        client = self.ctx.judge(self.judge_key(self.params))
        size = int(self.params.get("batch_size") or 8)
        batches = [list(rows[i:i + size]) for i in range(0, len(rows), size)]
        requests = [LLMRequest([{"role": "user", "content": self.batch_prompt(batch)}],
                               max_tokens=self.answer_max_tokens * len(batch) + 8,
                               tags={"evaluator": self.ctx.label or self.id,
                                     "test_case_key": ",".join(r.test_case_key for r in batch)})
                    for batch in batches]
        for batch, completion in zip(batches, client.complete_many(requests)):
            lines = {}
            if completion.ok:
                for match in _LINE.finditer(completion.text or ""):
                    lines.setdefault(int(match.group(1)), match.group(2))
            for number, _row in enumerate(batch, start=1):
                if not completion.ok:
                    answer = completion
                elif number in lines:
                    answer = Completion(text=lines[number], cached=completion.cached)
                else:
                    answer = Completion(text=f"(no line for item {number} in: {(completion.text or '')[:200]})",
                                        cached=completion.cached)
                yield self._row_result(client.config.key, [answer])


class GroundednessCheck(_BatchedCheck):
    id = "generation_groundedness"
    display_name = "Generated item: reference grounded in its passages (Judge)"
    description = ("Whether every claim of a generated item's reference answer is stated in the passages it "
                   "cites; the judge answers yes or no per item, several items a prompt.")
    header = ("You check items of a test set. Each item has PASSAGES, a QUESTION and an ANSWER written from "
              "the passages.")
    prompt_template = "ITEM <n>\nPASSAGES:\n- {{RETRIEVED_CONTEXT}}\nQUESTION: {{QUESTION}}\nANSWER: {{ACTUAL_ANSWER}}"
    question_line = ("For each item: is every claim of the ANSWER stated in its PASSAGES (yes), or does the "
                     "ANSWER say something the passages do not say or contradict (no)?")
    metrics = judge_metrics(passes=("grounded", "Grounded (pass)"), fails=("ungrounded", "Not grounded (fail)"),
                            retrieval=("grounded_retrieval", "Grounded retrieval"),
                            generation=("grounded_generation", "Grounded generation"),
                            parse=("grounded_parse_failures", "Groundedness parse failures"),
                            what="as grounded in its passages")


class AnswerabilityCheck(_BatchedCheck):
    id = "generation_answerability"
    display_name = "Generated item: question answerable from the passages (Judge)"
    description = ("Whether a generated item's question can be answered from the given passages alone; for an "
                   "unanswerable item the passages are the documents' chunks closest to its question.")
    header = "You check items of a test set. Each item has PASSAGES and a QUESTION (its ANSWER is for reference)."
    prompt_template = "ITEM <n>\nPASSAGES:\n- {{RETRIEVED_CONTEXT}}\nQUESTION: {{QUESTION}}\nANSWER: {{ACTUAL_ANSWER}}"
    question_line = ("For each item: can the QUESTION be answered from its PASSAGES alone (yes), or do the "
                     "passages not give the answer (no)?")
    metrics = judge_metrics(passes=("answerable", "Answerable (pass)"), fails=("unanswerable", "Not answerable (fail)"),
                            retrieval=("answerable_retrieval", "Answerable retrieval"),
                            generation=("answerable_generation", "Answerable generation"),
                            parse=("answerable_parse_failures", "Answerability parse failures"),
                            what="as answerable from its passages")


#: The checks, by the quality score they give.
QUALITY_CHECKS: dict[str, type[_BatchedCheck]] = {"groundedness": GroundednessCheck,
                                                  "answerability": AnswerabilityCheck}


def judge_rows(items: Sequence[CheckedItem]) -> list[Row]:
    """Rows for a check: ``{"key", "question", "answer", "passages"}`` each."""
    return [Row(key=i["key"], input=i["question"], actual_output=i["answer"], context=list(i["passages"]),
                test_case_key=i["key"], model_key="generated") for i in items]
