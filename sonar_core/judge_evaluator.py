"""A base for LLM-judge evaluators: a prompt per row, N answers, a majority verdict.

An evaluator built on :class:`JudgeEvaluator` declares its prompt (``prompt_template``, with
``{{QUESTION}}``, ``{{EXPECTED_ANSWER}}``, ``{{RETRIEVED_CONTEXT}}`` / ``{{CONTEXT}}`` and
``{{ACTUAL_ANSWER}}`` placeholders; single braces and H2O's ``{INPUT}`` / ``{ACTUAL_OUTPUT}``
also work) and implements :meth:`JudgeEvaluator.parse_answer`, which turns one judge answer
into a :class:`JudgeVote`. The core does the rest:

* renders the prompt per row and asks the judge ``judge_repeats`` times (repeat index in the
  cache key), through ``ctx.judge(...)``: cached, concurrent, paced and retried;
* the row's verdict is the majority of the parsed votes (a tie fails the row); an answer that
  cannot be parsed, or a call that failed after its retries, is a vote for nothing. A row with
  no parsed vote is a **parse failure**: never an exception, never a lost row;
* the row's details keep every raw answer (``judge_answers``), the votes and the judge's key;
  a failing row's error message is the judge's reason;
* ``judge_agreement`` is the share of the N answers that agree with the majority (rows judged
  once have none).
* **Constrained verdicts.** An evaluator that declares ``labels`` (its answer words: ``present`` /
  ``absent``, ``0``..``10``) asks for one of them: a backend that sees probabilities answers with
  the most probable label (the local backend scores every label and never generates free text;
  an OpenAI-compatible endpoint is asked for ``logprobs``) and :meth:`JudgeEvaluator.label_vote`
  reads it. ``judge_confidence`` is the chosen label's probability among the labels (the mean
  over the answers that agree with the majority), None when only text was available, in which
  case :meth:`JudgeEvaluator.parse_answer` reads the text as before.
* ``calibration_labels`` names the calibration set's label of a passing and of a failing verdict
  (:mod:`sonar_core.llm.calibration` measures the judge on the evaluator's set). The core raises a "judge unreliable" problem (:mod:`sonar_core.findings.judge_reliability`)
  for a model whose mean agreement is below that metric's threshold or whose parse-failure share
  is above that metric's threshold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar, Iterable, NotRequired, Sequence, TypedDict

from .contract import Input, Metric, MetricRole, Param, RowResult
from .conversation import transcript_text
from .dataset import Row
from .params import ParamValues
from .passfail import PassFailEvaluator, Verdict


class JudgeDetails(TypedDict):
    """A judged row's details: the judge, its answers (cut to ``ANSWER_LIMIT``) and votes, per asking."""
    judge: str
    judge_answers: list[str | None]
    judge_votes: list[str]  #: ``pass``, ``fail`` or ``none`` (unreadable)
    judge_scores: NotRequired[list[float]]  #: the scores a scoring judge gave, where it gave any
    judge_confidences: NotRequired[list[float | None]]  #: a labelled judge's confidence per answer

__all__ = [
    "JudgeEvaluator",
    "JudgeVote",
    "JUDGE_KEY_PARAM",
    "JUDGE_AGREEMENT",
    "JUDGE_CONFIDENCE",
    "JUDGE_PARAMETERS",
    "MIN_JUDGE_KAPPA",
    "judge_metrics",
    "keyword_vote",
    "placeholders_in",
    "render_prompt",
]

#: The catalogue's parameter that names the judge configuration.
JUDGE_KEY_PARAM = "custom_eval_judge_config_key"
#: Metric key of the agreement rate between repeated judgements.
JUDGE_AGREEMENT = "judge_agreement"
#: The parameter holding the least calibration kappa at which a judge's verdicts count.
MIN_JUDGE_KAPPA = "min_judge_kappa"
#: Metric key of the chosen label's probability among the labels (constrained verdicts).
JUDGE_CONFIDENCE = "judge_confidence"
#: Longest raw answer a row's details keep (a runaway judge must not bloat the results).
ANSWER_LIMIT = 4000

JUDGE_PARAMETERS: tuple[Param, ...] = (
    Param(JUDGE_KEY_PARAM, str, None,
          "Key of the LLM configuration used as the judge (`sonar judges` lists them). Empty means the run's "
          "default judge (run setting `default_judge`, else `local-smollm2`)."),
    Param("judge_repeats", int, 1,
          "How many times the judge is asked about each row. With more than one, the verdict is the majority "
          "and the judge agreement rate is reported.", min=1, max=25),
    Param(MIN_JUDGE_KAPPA, float, 0.4,
          "Least Cohen's kappa the judge must reach on this evaluator's calibration set for its verdicts to "
          "count. Below it the judge is untrusted: the evaluator's rows are not scored (with the run setting "
          "score_untrusted they are, marked untrusted and not counted), and the evaluator raises one judge "
          "problem instead of problems about the models.", min=-1.0, max=1.0),
)

_NAMES: dict[str, Input] = {
    "question": Input.QUESTION, "input": Input.QUESTION,
    "expected_answer": Input.EXPECTED_ANSWER, "expected_output": Input.EXPECTED_ANSWER,
    "retrieved_context": Input.RETRIEVED_CONTEXT, "context": Input.RETRIEVED_CONTEXT,
    "actual_answer": Input.ACTUAL_ANSWER, "actual_output": Input.ACTUAL_ANSWER,
    "conversation": Input.CONVERSATION, "expected_outcome": Input.EXPECTED_OUTCOME,
}
_PLACEHOLDER = re.compile(r"\{\{?\s*(" + "|".join(sorted(_NAMES, key=len, reverse=True)) + r")\s*\}?\}",
                          re.IGNORECASE)


def placeholders_in(template: str) -> tuple[Input, ...]:
    """The inputs a prompt template uses, in the catalogue's order."""
    used = {_NAMES[m.group(1).lower()] for m in _PLACEHOLDER.finditer(template)}
    return tuple(needed for needed in Input if needed in used)


def _value(row: Row, needed: Input) -> str:
    if needed is Input.QUESTION:
        return row.input or ""
    if needed is Input.EXPECTED_ANSWER:
        return row.expected_output or ""
    if needed is Input.RETRIEVED_CONTEXT:
        return "\n\n".join(row.context or [])
    if needed is Input.CONVERSATION:
        return transcript_text(row.conversation)
    if needed is Input.EXPECTED_OUTCOME:
        return row.expected_outcome or ""
    return row.actual_output or ""


def render_prompt(template: str, row: Row) -> str:
    """``template`` with each placeholder replaced by the row's value, in one pass: text from the
    dataset is never scanned for placeholders again."""
    return _PLACEHOLDER.sub(lambda m: _value(row, _NAMES[m.group(1).lower()]), template)


@dataclass
class JudgeVote:
    """One judge answer, read.

    Attributes:
        passed: True when the row passes, False when it fails, None when the answer could not
            be read.
        reason: the judge's reason (for a failing row's message), or why the answer could not
            be read.
        score: a number the judge gave, where the prompt asks for one.
    """

    passed: bool | None
    reason: str = ""
    score: float | None = None


_WORD = re.compile(r"[a-z]+")


def keyword_vote(answer: str, verdicts: dict[str, bool], meaning: dict[str, str] | None = None) -> JudgeVote:
    """Read a one-word answer: the first word when it is a keyword, else the only keyword present.

    ``verdicts`` maps each keyword (lower case) to pass (True) or fail (False); ``meaning`` gives
    the reason shown for a keyword (default: ``answered '<keyword>'``).
    """
    words = _WORD.findall(answer.lower())
    found = [w for w in words if w in verdicts]
    if words and words[0] in verdicts:
        word = words[0]
    elif len(set(found)) == 1:
        word = found[0]
    else:
        expected = " or ".join(f"'{k}'" for k in verdicts)
        why = "several of them" if found else "none of them"
        return JudgeVote(None, f"expected {expected}, the answer holds {why}")
    reason = (meaning or {}).get(word, f"answered '{word}'")
    return JudgeVote(verdicts[word], reason)


def judge_metrics(*, passes: tuple[str, str], fails: tuple[str, str], retrieval: tuple[str, str],
                  generation: tuple[str, str], parse: tuple[str, str], what: str,
                  primary_pass: bool = True) -> tuple[Metric, ...]:
    """The five pass/fail metrics of a judge evaluator (catalogue names) plus judge agreement.

    Each pair is (key, display name); ``what`` ends each description ("... for <what>").
    """
    return (
        Metric(passes[0], passes[1], f"Share of rows the judge passed {what}.", threshold=0.5,
               is_primary=primary_pass, role=MetricRole.PASS, raises_problems=primary_pass),
        Metric(fails[0], fails[1], f"Share of rows the judge failed {what} (1 - pass - parse failures).",
               higher_is_better=False, threshold=0.5, role=MetricRole.FAIL, raises_problems=False),
        Metric(retrieval[0], retrieval[1], "Share of rows whose retrieved context failed the check; this judge is "
               "asked about the answer only, so it is always 0.", higher_is_better=False, threshold=0.5,
               role=MetricRole.RETRIEVAL_FAILURE, raises_problems=False),
        Metric(generation[0], generation[1], "Share of rows whose generated answer failed the check; the same as "
               "the fail metric.", higher_is_better=False, threshold=0.5, role=MetricRole.GENERATION_FAILURE,
               raises_problems=False),
        Metric(parse[0], parse[1], "Share of rows with no usable judge answer (unparseable, or the call failed "
               "after its retries); above the threshold the judge is reported as unreliable.",
               higher_is_better=False, threshold=0.5, role=MetricRole.PARSE_FAILURE, raises_problems=False),
        Metric(JUDGE_AGREEMENT, "Judge agreement", "Share of a row's judge_repeats answers that agree with its "
               "majority verdict (empty when each row is judged once); below the threshold the judge is "
               "reported as unreliable.", threshold=0.8, raises_problems=False),
        Metric(JUDGE_CONFIDENCE, "Judge confidence", "Probability the judge gave its verdict among its answer "
               "labels (a constrained verdict; empty when the judge's endpoint gave text only). Informative: "
               "nothing fails on it.", threshold=0.0, raises_problems=False),
    )


class JudgeEvaluator(PassFailEvaluator):
    """Implement :meth:`parse_answer` and declare ``prompt_template``; see the module docstring."""

    requires_judge: ClassVar[bool] = True
    #: The parameter that names the judge's LLM configuration (see :meth:`judge_key`).
    judge_param: ClassVar[str] = JUDGE_KEY_PARAM
    #: The prompt the judge is asked, with its placeholders (``{{QUESTION}}``, ``{{ACTUAL_ANSWER}}``...);
    #: shown by ``sonar describe`` and the catalogue.
    prompt_template: ClassVar[str] = ""
    #: The parameter holding a user's prompt template, for evaluators that take one.
    template_param: ClassVar[str | None] = None
    #: Most tokens a judge answer needs (a one-word verdict needs few); the configuration caps it too.
    answer_max_tokens: ClassVar[int] = 10
    #: Metric that receives the mean of the votes' scores, for judges that give a number.
    score_metric: ClassVar[str | None] = None
    #: The answers the judge may give (its verdict labels, as the prompt spells them); empty for a
    #: free-text answer read by :meth:`parse_answer` only.
    labels: ClassVar[tuple[str, ...]] = ()
    #: The calibration set's label of a passing verdict (True) and of a failing one (False).
    calibration_labels: ClassVar[dict[bool, str]] = {}
    #: The parameter naming a user's calibration set (BYOP); None: ``calibration/<id>.jsonl`` next to
    #: the evaluator's module.
    calibration_param: ClassVar[str | None] = None
    parameters: ClassVar[tuple[Param, ...]] = JUDGE_PARAMETERS
    category: ClassVar[str] = "Generation"

    # -- what a judge evaluator implements --------------------------------------------------------

    def parse_answer(self, answer: str) -> JudgeVote:
        raise NotImplementedError

    # -- the judge's declarations ------------------------------------------------------------------

    @classmethod
    def declaration_problem(cls) -> str | None:
        """The base's problems, then: a judge evaluator reads answers and declares a prompt."""
        problem = super().declaration_problem()
        if problem is None and cls.parse_answer is JudgeEvaluator.parse_answer:
            problem = f"{cls.__name__} does not implement parse_answer()"
        if problem is None and not cls.prompt_template.strip():
            problem = f"{cls.__name__} declares no prompt_template"
        return problem

    @classmethod
    def judge_key(cls, params: ParamValues) -> str | None:
        return params.get(cls.judge_param)

    @classmethod
    def judge_prompt(cls) -> str:
        return cls.prompt_template

    def label_vote(self, label: str) -> JudgeVote:
        """The vote of a constrained answer (one of ``labels``); by default the label read as text."""
        return self.parse_answer(label)

    # -- the shared machinery ----------------------------------------------------------------------

    def template(self) -> str:
        if self.template_param and self.params.get(self.template_param):
            return self.params[self.template_param]
        return self.prompt_template

    def messages(self, row: Row) -> list[dict[str, str]]:
        return [{"role": "user", "content": render_prompt(self.template(), row)}]

    def _vote(self, text: str, labelled: bool = False) -> JudgeVote:
        try:
            return self.label_vote(text) if labelled else self.parse_answer(text)
        except Exception as exc:  # a parser bug costs the row, not the run
            return JudgeVote(None, f"the answer could not be read ({type(exc).__name__}: {exc})")

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        from .llm import LLMRequest

        client = self.ctx.judge(self.judge_key(self.params))
        repeats = self.params.get("judge_repeats") or 1
        requests = [
            LLMRequest(self.messages(row), repeat=i, max_tokens=self.answer_max_tokens,
                       tags={"evaluator": self.ctx.label or self.id, "test_case_key": row.test_case_key,
                             "model_key": row.model_key}, labels=tuple(self.labels) or None)
            for row in rows for i in range(repeats)
        ]
        completions = client.complete_many(requests)
        for n, _row in enumerate(rows):
            yield self._row_result(client.config.key, completions[n * repeats:(n + 1) * repeats])

    def _row_result(self, judge: str, completions: list) -> RowResult:
        votes = [self._vote(c.text, c.confidence is not None and c.text in self.labels) if c.ok
                 else JudgeVote(None, f"judge call failed: {c.error}") for c in completions]
        confidences = [c.confidence if c.ok else None for c in completions]
        parsed = [v for v in votes if v.passed is not None]
        details: JudgeDetails = {
            "judge": judge,
            "judge_answers": [None if c.text is None else c.text[:ANSWER_LIMIT] for c in completions],
            "judge_votes": ["pass" if v.passed else "fail" if v.passed is False else "none" for v in votes],
        }
        scores = [v.score for v in parsed if v.score is not None]
        if scores:
            details["judge_scores"] = scores
        if self.labels:
            details["judge_confidences"] = confidences
        agreement: float | None = None
        confidence: float | None = None
        if not parsed:
            reason = votes[0].reason if votes else "no answer"
            verdict = Verdict(parse_error=f"judge {judge}: {reason}", details=details)
        else:
            passes = sum(1 for v in parsed if v.passed)
            majority = passes > len(parsed) - passes  # a tie fails the row
            agreeing = [v for v in parsed if v.passed == majority]
            if len(votes) > 1:
                agreement = len(agreeing) / len(votes)
            sure = [p for v, p in zip(votes, confidences) if p is not None and v.passed == majority]
            confidence = math.fsum(sure) / len(sure) if sure else None
            message = None if majority else f"judge {judge}: {agreeing[0].reason}"
            verdict = Verdict(answer_ok=majority, error_message=message, details=details)
        result = self.verdict_to_result(verdict)
        if any(m.key == JUDGE_AGREEMENT for m in self.metrics):
            result.values[JUDGE_AGREEMENT] = agreement
        if any(m.key == JUDGE_CONFIDENCE for m in self.metrics):
            result.values[JUDGE_CONFIDENCE] = confidence
        if self.score_metric:
            result.values[self.score_metric] = math.fsum(scores) / len(scores) if scores else None
        return result
