"""Context relevancy (judge): the share of the retrieved context's sentences that the question needs.

The catalogue's formula: an LLM judge identifies the context sentences relevant to the question and

    context relevancy = question-relevant context sentences / all context sentences

with the sentences counted by a sentence tokenizer. Here Sonar's tokenizer (the run's Punkt splitter,
``ctx.split_sentences``, on each chunk) splits the context first; the judge is shown the question and
the whole context, its sentences numbered, and names each sentence relevant (``yes``) or not (``no``),
one constrained verdict per sentence, so every count is Sonar's own and every verdict is labelled (a
local judge scores the two labels; an endpoint is asked for log-probabilities) and calibrated like any
judge's. A judge cannot merge, split or reword sentences and change the ratio.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import (Difference, Input, JUDGE_AGREEMENT, JUDGE_CONFIDENCE, JudgeEvaluator, JudgeVote, Metric,
                        MetricRole, Row, RowResult, Verdict, keyword_vote, render_prompt)

__all__ = ["ContextRelevancyJudgeEvaluator", "context_sentences", "numbered", "CONTEXT_RELEVANCY_THRESHOLD"]

#: The sentence asked about; filled in after the row's placeholders, so dataset text is never scanned again.
SENTENCE = "{{SENTENCE}}"
PROMPT = """\
You are checking whether one sentence of a retrieved context is relevant to a question. Here is the data:
[BEGIN DATA]
************
[Question]: {{QUESTION}}
************
[Context]:
{{RETRIEVED_CONTEXT}}
************
[Sentence]: {{SENTENCE}}
[END DATA]

Determine whether the Sentence, taken from the Context, is relevant to the Question: whether it is \
needed to answer the Question. Your response must be a single word, either "yes" or "no", and should \
not contain any text or characters aside from that. "yes" means that the Sentence is needed to answer \
the Question. "no" means that it is not."""

#: The catalogue's default threshold of the context relevancy score.
CONTEXT_RELEVANCY_THRESHOLD = 0.75
_SPACE = re.compile(r"\s+")


def context_sentences(chunks: Sequence[str], split_sentences) -> list[str]:
    """The context's sentences, chunk by chunk (a sentence never spans two chunks), inner whitespace
    collapsed; pieces without a letter or digit are no sentence."""
    return [_SPACE.sub(" ", s).strip() for chunk in chunks for s in split_sentences(chunk) if re.search(r"\w", s)]


def numbered(sentences: Sequence[str]) -> str:
    """The sentences as the prompt shows them: ``[1] First sentence.`` one per line."""
    return "\n".join(f"[{n}] {s}" for n, s in enumerate(sentences, start=1))


class ContextRelevancyJudgeEvaluator(JudgeEvaluator):
    """Per row, relevant context sentences / context sentences; a row passes at or above the threshold.

    Each sentence is one labelled question to the judge (``yes`` / ``no``), asked ``judge_repeats``
    times; a sentence is relevant when most of its answers say ``yes`` (a tie is not relevant). The
    calibration set's ``relevant`` items are contexts a good judge scores at or above the default
    threshold (0.75), ``irrelevant`` ones below it.
    """

    id = "context_relevancy"
    display_name: ClassVar[str] = "Context Relevancy"
    tagline: ClassVar[str] = ("An LLM judge names the retrieved context's sentences that the question needs; the "
                              "score is their share of all the context's sentences.")
    description: ClassVar[str] = (
        "The catalogue's context relevancy: `context relevancy = question-relevant context sentences / all context "
        "sentences`. Sonar's sentence tokenizer (Punkt, on each chunk) splits the retrieved context; for each "
        "sentence the judge is shown the question and the whole context, its sentences numbered, and answers "
        "`yes` (the sentence is needed to answer the question) or `no`, a constrained verdict like every judge's. "
        "The score is the number of sentences judged relevant (by the majority of `judge_repeats` answers) over "
        "the number of sentences; a row passes when it is at or above the threshold (`metric_threshold`, default "
        "0.75). The row's details list the context's sentences, the numbers of the relevant ones and every "
        "answer. A sentence with no readable answer makes the row a parse failure (its answers are kept)."
    )
    category: ClassVar[str] = "Retrieval"
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION, Input.RETRIEVED_CONTEXT)
    prompt_template: ClassVar[str] = PROMPT
    labels: ClassVar[tuple[str, ...]] = ("yes", "no")
    calibration_labels: ClassVar[dict[bool, str]] = {True: "relevant", False: "irrelevant"}
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("context_relevancy", "Context relevancy", "Share of the retrieved context's sentences that the judge "
               "named relevant to the question (relevant sentences / all sentences).",
               threshold=CONTEXT_RELEVANCY_THRESHOLD, is_primary=True),
        Metric("context_relevancy_passes", "Context relevancy passes", "Share of rows whose context relevancy is at "
               "or above the threshold.", threshold=0.5, role=MetricRole.PASS, raises_problems=False),
        Metric("context_relevancy_failures", "Context relevancy failures", "Share of rows whose context relevancy is "
               "below the threshold (1 - passes - parse failures).", higher_is_better=False, threshold=0.5,
               role=MetricRole.FAIL, raises_problems=False),
        Metric("context_relevancy_parse_failures", "Context relevancy parse failures", "Share of rows with a "
               "sentence the judge gave no usable answer on (unreadable, or the call failed after its retries); "
               "above the threshold the judge is reported as unreliable.", higher_is_better=False, threshold=0.5,
               role=MetricRole.PARSE_FAILURE, raises_problems=False),
        Metric(JUDGE_AGREEMENT, "Judge agreement", "Mean over a row's sentences of the share of their judge_repeats "
               "answers that agree with the sentence's majority (empty when each sentence is asked once); below "
               "the threshold the judge is reported as unreliable.", threshold=0.8, raises_problems=False),
        Metric(JUDGE_CONFIDENCE, "Judge confidence", "Mean over a row's sentences of the probability the judge gave "
               "its verdict between yes and no (empty when the judge's endpoint gave text only). Informative: "
               "nothing fails on it.", threshold=0.0, raises_problems=False),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            "the judge's task: one yes / no verdict per context sentence (Sonar's prompt; the catalogue shows "
            "none), where ragas's original prompt had the judge copy the relevant sentences out and tokenized "
            "the copy",
            "counting what a judge copied lets it merge, split or reword sentences and change the ratio; a "
            "labelled verdict per sentence keeps both counts Sonar's own and can be calibrated",
            "none: the formula is the catalogue's; `sonar describe context_relevancy` shows the prompt",
            field="formula",
        ),
    )

    def sentences(self, row: Row) -> list[str]:
        return context_sentences(row.context, self.ctx.split_sentences)

    def sentence_messages(self, row: Row, sentences: Sequence[str], n: int) -> list[dict[str, str]]:
        """The prompt about sentence ``n`` (1-based): the row's placeholders filled in one pass, the
        context numbered, then the sentence put in its place."""
        shown = dataclasses.replace(row, context=[numbered(sentences)])
        before, after = self.template().split(SENTENCE, 1)
        text = (render_prompt(before, shown) + f"[{n}] {sentences[n - 1]}" + render_prompt(after, shown))
        return [{"role": "user", "content": text}]

    def messages(self, row: Row) -> list[dict[str, str]]:
        """The prompt about the context's first sentence (the shape every sentence's prompt has)."""
        return self.sentence_messages(row, self.sentences(row) or [""], 1)

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"yes": True, "no": False},
                            {"yes": "relevant to the question", "no": "not needed for the question"})

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        from sonar_core import LLMRequest

        client = self.ctx.judge(self.judge_key(self.params))
        repeats = self.params.get("judge_repeats") or 1
        splits = [self.sentences(row) for row in rows]
        requests = [
            LLMRequest(self.sentence_messages(row, sentences, n), repeat=i, max_tokens=self.answer_max_tokens,
                       tags={"evaluator": self.ctx.label or self.id, "test_case_key": row.test_case_key,
                             "model_key": row.model_key, "sentence": n}, labels=self.labels)
            for row, sentences in zip(rows, splits) for n in range(1, len(sentences) + 1) for i in range(repeats)
        ]
        # Every model's row of a test case asks the same prompts (the answer is not in them): each distinct
        # prompt is asked once and its completion shared, instead of racing the cache concurrently.
        index: dict[str, int] = {}
        unique = []
        for request in requests:
            if repr((request.messages, request.repeat)) not in index:
                index[repr((request.messages, request.repeat))] = len(unique)
                unique.append(request)
        asked = client.complete_many(unique) if unique else []
        completions = [asked[index[repr((r.messages, r.repeat))]] for r in requests]
        start = 0
        for sentences in splits:
            size = len(sentences) * repeats
            yield self._context_result(client.config.key, sentences, completions[start:start + size], repeats)
            start += size

    def _context_result(self, judge: str, sentences: list[str], completions: list, repeats: int) -> RowResult:
        """The row's result from its sentences' verdicts (each read by the base's majority rule)."""
        verdicts = [self._row_result(judge, completions[k * repeats:(k + 1) * repeats]) for k in range(len(sentences))]
        pass_key, parse_key = (next(m.key for m in self.metrics if m.role is role)
                               for role in (MetricRole.PASS, MetricRole.PARSE_FAILURE))
        relevant = [n for n, v in enumerate(verdicts, start=1) if v.values[pass_key] == 1.0]
        unreadable = [n for n, v in enumerate(verdicts, start=1) if v.values[parse_key] == 1.0]
        details: dict[str, Any] = {
            "judge": judge, "context_sentences": sentences, "relevant_sentences": relevant,
            "judge_answers": [v.details["judge_answers"] for v in verdicts],
            "judge_votes": [v.details["judge_votes"] for v in verdicts],
            "judge_confidences": [v.details.get("judge_confidences") for v in verdicts],
        }
        score: float | None = None
        if not sentences:  # only punctuation: nothing to ask about
            verdict = Verdict(parse_error="the retrieved context holds no sentence", details=details)
        elif unreadable:
            reason = (verdicts[unreadable[0] - 1].error_message or "").removeprefix(f"judge {judge}: ")
            verdict = Verdict(parse_error=f"judge {judge}: no readable verdict on sentence {unreadable[0]} of "
                                          f"{len(sentences)}: {reason}", details=details)
        else:
            score = len(relevant) / len(sentences)
            limit = self.params.get("metric_threshold")
            passed = score >= (CONTEXT_RELEVANCY_THRESHOLD if limit is None else limit)
            which = ", ".join(str(n) for n in relevant) or "none"
            verdict = Verdict(answer_ok=passed, details=details, error_message=None if passed else
                              f"judge {judge}: relevant sentences {which} of {len(sentences)} "
                              f"(context relevancy {score:.2f})")
        result = self.verdict_to_result(verdict)
        result.values["context_relevancy"] = score
        result.values[JUDGE_AGREEMENT] = _mean(v.values.get(JUDGE_AGREEMENT) for v in verdicts)
        result.values[JUDGE_CONFIDENCE] = _mean(v.values.get(JUDGE_CONFIDENCE) for v in verdicts)
        return result


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None
