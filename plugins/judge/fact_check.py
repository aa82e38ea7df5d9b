"""Fact-Check (judge): does the answer contain false information? The judge scores it 0-10 (tenths)."""

from __future__ import annotations

import json
import re
from typing import Any

from sonar_core import Difference, Input, JudgeEvaluator, JudgeVote, Metric, judge_metrics

# The catalogue's prompt asks for JSON {"answer", "evaluation_score" (0.0-1.0), "evaluation_summary"}.
# A constrained verdict needs an answer whose first token is the verdict, so the judge is asked for
# the score in tenths, a whole number 0-10, alone (labels "0".."10"; 7 means 0.7). The catalogue's
# "use the internet search" is left out: the configured judge answers from what it knows.
PROMPT = """\
You are agent whose role is to evaluate text of the ACTUAL ANSWER.

Instructions for WHAT should be evaluated:
[BEGIN EVALUATION INSTRUCTIONS]
Fact-check the text and determine whether the text contains false information.
[END EVALUATION INSTRUCTIONS]

ACTUAL ANSWER data:
[BEGIN ACTUAL ANSWER]
{{ACTUAL_ANSWER}}
[END ACTUAL ANSWER]

If it may help, use QUESTION which was answered by the ACTUAL ANSWER:
[BEGIN QUESTION]
{{QUESTION}}
[END QUESTION]

Instructions how to return the evaluation result:
- respond with the evaluation score alone: one whole number from 0 to 10, where 10 means that the \
ACTUAL ANSWER is correct (it passed the evaluation) and 0 means that it contains false information \
(it failed the evaluation)."""

#: The catalogue's default threshold of the fact-check score.
FACT_CHECK_THRESHOLD = 0.75
#: A text answer that starts with a whole number of tenths ("7", " 7/10", "7.").
_TENTHS = re.compile(r"\s*(\d+(?:\.\d+)?)(?:\s*/\s*10)?(?![\d.]*\d)")


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (judges wrap JSON in prose or ``` fences), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


class FactCheckEvaluator(JudgeEvaluator):
    """Per row, the judge's score (0-1); a row passes at or above the threshold.

    Labels: ``"0"`` to ``"10"``, tenths of the catalogue's 0-1 ``evaluation_score`` (eleven steps are
    as fine as a judge's reading of "how correct" gets, and each is one short token). A text answer
    is read as a whole number 0-10 (tenths) or, as the catalogue's prompt asked, a JSON object with
    ``evaluation_score`` from 0 to 1. The calibration set's ``correct`` items should score at or
    above the default threshold (0.75), ``incorrect`` ones below it.
    """

    id = "fact_check"
    display_name = "Fact-Check"
    tagline = "An LLM judge scores each answer from 0 (false information) to 1 (correct), with its reason."
    description = (
        "Asks the LLM judge to fact-check the actual answer (with the question for context) and answer a "
        "whole number from 0 to 10 (tenths of the catalogue's 0-1 `evaluation_score`). The `fact_check` metric "
        "is the score, from 0 (false information) to 1 (correct), averaged over `judge_repeats`; a row passes "
        "when the score is at or above the primary metric's threshold (`metric_threshold`, default 0.75). A "
        "text answer that is neither a number from 0 to 10 nor a JSON object with an `evaluation_score` from 0 "
        "to 1 is a parse failure, kept in `judge_answers`. The catalogue's agent searched the "
        "internet; here the configured judge answers from what it knows, so its verdicts are only as good as "
        "its knowledge."
    )
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER)
    prompt_template = PROMPT
    answer_max_tokens = 16
    score_metric = "fact_check"
    labels = tuple(str(n) for n in range(11))
    calibration_labels = {True: "correct", False: "incorrect"}
    metrics = (
        Metric("fact_check", "Fact-check", "Mean judge score of the answer's factual correctness, from 0 (false "
               "information) to 1 (correct).", threshold=FACT_CHECK_THRESHOLD, is_primary=True),
    ) + judge_metrics(
        passes=("fact_check_passes", "Fact-check passes"),
        fails=("fact_check_failures", "Fact-check failures"),
        retrieval=("fact_check_retrieval_failures", "Fact-check retrieval failures"),
        generation=("fact_check_generation_failures", "Fact-check generation failures"),
        parse=("fact_check_parse_failures", "Fact-check parse failures"),
        what="as factually correct (score at or above the threshold)",
        primary_pass=False,
    )
    differences = (
        Difference(
            what="method: the catalogue asks an h2oGPTe agent with internet search; Sonar asks the configured LLM "
                 "judge, which answers from what it knows, for a score in tenths (0-10)",
            why="Sonar has no agent host and reaches no network at run time",
            action="a fact the judge does not know is not checked: read a passing score as 'no falsehood the "
                   "judge recognised', and calibrate the judge (`sonar calibrate`) before trusting it",
            field="formula",
        ),
        Difference(
            what="parameter agent_host_connection_config_key: listed by the catalogue, absent in Sonar",
            why="Sonar has no h2oGPTe agent host; the judge is chosen by custom_eval_judge_config_key",
            action="remove it from a configuration copied from H2O Sonar",
            field="parameter:agent_host_connection_config_key",
        ),
        Difference(
            what="parameter agent_llm_model_name: listed by the catalogue, absent in Sonar",
            why="the judge's model is part of its LLM configuration (`sonar judges`)",
            action="remove it from a configuration copied from H2O Sonar",
            field="parameter:agent_llm_model_name",
        ),
        Difference(
            what="parameter agent_eval_h2ogpte_collection_id: listed by the catalogue, absent in Sonar",
            why="Sonar has no h2oGPTe collection: the judge gets no corpus",
            action="remove it from a configuration copied from H2O Sonar",
            field="parameter:agent_eval_h2ogpte_collection_id",
        ),
        Difference(
            what="parameter max_dataset_rows: listed by the catalogue, absent in Sonar",
            why="Sonar's common max_rows parameter limits the rows of any evaluator",
            action="remove it from a configuration copied from H2O Sonar",
            field="parameter:max_dataset_rows",
        ),
    )

    def label_vote(self, label: str) -> JudgeVote:
        return self._score_vote(int(label) / 10, "")

    def parse_answer(self, answer: str) -> JudgeVote:
        data = first_json_object(answer)
        if data is None:
            number = _TENTHS.match(answer)
            if number and 0 <= float(number.group(1)) <= 10:
                value = float(number.group(1))
                # A whole number is tenths as asked; a decimal up to 1 ("0.9") is the catalogue's 0-1 score.
                return self._score_vote(value if "." in number.group(1) and value <= 1 else value / 10, "")
            return JudgeVote(None, "expected a score from 0 to 10 (or a JSON object), the answer holds neither")
        score = data.get("evaluation_score")
        if isinstance(score, str):
            try:
                score = float(score)
            except ValueError:
                score = None
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
            return JudgeVote(None, "expected evaluation_score, a number from 0 to 1")
        return self._score_vote(float(score), str(data.get("evaluation_summary") or "").strip())

    def _score_vote(self, score: float, summary: str) -> JudgeVote:
        limit = self.params.get("metric_threshold")
        limit = FACT_CHECK_THRESHOLD if limit is None else limit
        reason = f"score {score:g}" + (f": {summary}" if summary else "")
        return JudgeVote(score >= limit, reason, score=score)
