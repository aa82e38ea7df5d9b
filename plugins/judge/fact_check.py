"""Fact-Check (judge): does the answer contain false information? The judge scores it 0-1 in JSON."""

from __future__ import annotations

import json
import re
from typing import Any

from sonar_core import Input, Metric
from sonar_core.judging import JudgeEvaluator, JudgeVote, judge_metrics

PROMPT = """\
You are agent whose role is to evaluate text of the ACTUAL ANSWER.

Instructions for WHAT should be evaluated:
[BEGIN EVALUATION INSTRUCTIONS]
Fact-check the text and determine whether the text contains false information. Use the internet \
search to verify the information if needed.
[END EVALUATION INSTRUCTIONS]

Instructions how to return the evaluation result:
- provide the evaluation result as JSon with the following structure:
  { "answer": string, "evaluation_score": float, "evaluation_summary": string }
- evaluation_score: is the float number between 0.0 and 1.0 where 1.0 means that the ACTUAL ANSWER \
passed the evaluation and 0.0 means that the ACTUAL ANSWER failed the evaluation
- evaluation_summary: is the summary of the evaluation result which briefly provides justification \
for the evaluation score and describes how was the actual answer evaluated

ACTUAL ANSWER data:
[BEGIN ACTUAL ANSWER]
{{ACTUAL_ANSWER}}
[END ACTUAL ANSWER]

If it may help, use QUESTION which was answered by the ACTUAL ANSWER:
[BEGIN QUESTION]
{{QUESTION}}
[END QUESTION]"""

#: The catalogue's default threshold of the fact-check score.
FACT_CHECK_THRESHOLD = 0.75


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
    """Per row, the judge's ``evaluation_score`` (0-1); a row passes at or above the threshold."""

    id = "fact_check"
    display_name = "Fact-Check"
    tagline = "An LLM judge scores each answer from 0 (false information) to 1 (correct), with its reason."
    description = (
        "Asks the LLM judge to fact-check the actual answer (with the question for context) and return "
        "JSON `{\"answer\", \"evaluation_score\", \"evaluation_summary\"}`. The `fact_check` metric is the "
        "score, from 0 (false information) to 1 (correct), averaged over `judge_repeats`; a row passes when "
        "the score is at or above the primary metric's threshold (`metric_threshold`, default 0.75), and a "
        "failing row's message is the judge's `evaluation_summary`. An answer without a JSON object holding "
        "a score from 0 to 1 is a parse failure, kept in `judge_answers`. The catalogue's agent searched the "
        "internet; here the configured judge answers from what it knows, so its verdicts are only as good as "
        "its knowledge."
    )
    required_inputs = (Input.QUESTION, Input.ACTUAL_ANSWER)
    prompt_template = PROMPT
    answer_max_tokens = 256
    score_metric = "fact_check"
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

    def parse_answer(self, answer: str) -> JudgeVote:
        data = first_json_object(answer)
        if data is None:
            return JudgeVote(None, "expected a JSON object, the answer holds none")
        score = data.get("evaluation_score")
        if isinstance(score, str):
            try:
                score = float(score)
            except ValueError:
                score = None
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
            return JudgeVote(None, "expected evaluation_score, a number from 0 to 1")
        limit = self.params.get("metric_threshold")
        limit = FACT_CHECK_THRESHOLD if limit is None else limit
        summary = str(data.get("evaluation_summary") or "").strip()
        reason = f"score {float(score):g}" + (f": {summary}" if summary else "")
        return JudgeVote(float(score) >= limit, reason, score=float(score))
