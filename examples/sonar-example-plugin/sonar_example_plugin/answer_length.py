"""Answer length: does each answer stay within a word budget?

A score evaluator. For each row it counts the words of the actual answer (runs of
non-whitespace characters, so it works for any script that separates words with spaces) and
compares them with the ``max_words`` budget:

``conciseness`` (primary, in [0, 1], higher is better)
    1.0 when the answer has at most ``max_words`` words, otherwise ``max_words / words``:
    an answer twice as long as the budget scores 0.5.
``answer_words`` (in [0, 1], lower is better, informational)
    ``words / max_words`` clipped to [0, 1]: how much of the budget the answer used.

The core turns these per-row values into per-model means, threshold problems, insights,
leaderboards and every artifact file; this module only computes the numbers.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, ResultKind, Row, RowResult


class AnswerLengthEvaluator(Evaluator):
    """Scores how well each actual answer keeps to ``max_words`` words."""

    id = "answer_length"
    display_name = "Answer length"
    tagline = "Checks that answers stay within a word budget."
    description = (
        "Counts the words of every actual answer and compares the count with a budget "
        "(`max_words`). **Conciseness** is 1 for an answer within the budget and falls as "
        "`max_words / words` beyond it, so a model that rambles scores low. **Answer words** "
        "shows how much of the budget an answer used. Useful for chat assistants whose "
        "answers must fit a small screen or a voice reply."
    )
    required_inputs = (Input.ACTUAL_ANSWER,)
    compatibility = ("llm", "rag")
    kind = ResultKind.SCORE
    category = "Generation"
    problem_type = "accuracy"
    parameters = (
        Param("max_words", int, 50, "Word budget of an answer (words, at least 1).", min=1),
    )
    metrics = (
        Metric(
            "conciseness",
            "Conciseness",
            "1 when the answer has at most max_words words, else max_words / words.",
            value_range=(0.0, 1.0),
            higher_is_better=True,
            threshold=0.75,
            is_primary=True,
        ),
        Metric(
            "answer_words",
            "Answer words",
            "Words in the answer divided by max_words, clipped to [0, 1].",
            value_range=(0.0, 1.0),
            higher_is_better=False,
            threshold=1.0,
            # It restates conciseness from the other side; problems come from conciseness.
            raises_problems=False,
        ),
    )

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        budget = self.params["max_words"]
        for row in rows:
            words = len(row.actual_output.split())
            conciseness = 1.0 if words <= budget else budget / words
            message = None if words <= budget else f"answer has {words} words; the budget is {budget}"
            yield RowResult(
                values={"conciseness": conciseness, "answer_words": min(words / budget, 1.0)},
                details={"words": words},
                error_message=message,
            )
