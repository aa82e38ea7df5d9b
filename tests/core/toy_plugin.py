"""Toy evaluators for core tests: their per-row values are read straight from the data.

``toy_score`` scores a row with the number written in its actual answer, so every aggregate,
problem and insight in the core tests can be computed by hand. ``toy_passfail`` passes an
answer that contains "ok". ``toy_crash`` always raises. ``toy_slow`` sleeps per row
(``SONAR_TOY_SLEEP`` seconds) so a test can kill a run while it works.
"""

import os
import time

from sonar_core import (
    Evaluator, Input, Metric, MetricRole, Param, PassFailEvaluator, ResultKind, RowResult, Verdict, hookimpl,
)


class ToyScoreEvaluator(Evaluator):
    id = "toy_score"
    display_name = "Toy score"
    tagline = "Scores each answer with the number it contains."
    required_inputs = (Input.ACTUAL_ANSWER,)
    kind = ResultKind.SCORE
    metrics = (
        Metric("score", "Score", "The number in the answer.", threshold=0.5, is_primary=True),
        Metric("error_rate", "Error rate", "The number in the expected answer.", higher_is_better=False,
               threshold=0.2),
    )

    def evaluate(self, rows):
        for row in rows:
            error = float(row.expected_output) if row.expected_output else None
            yield RowResult(values={"score": float(row.actual_output), "error_rate": error})


class ToyPassFailEvaluator(PassFailEvaluator):
    id = "toy_passfail"
    display_name = "Toy pass/fail"
    required_inputs = (Input.ACTUAL_ANSWER,)
    optional_inputs = (Input.RETRIEVED_CONTEXT,)
    metrics = (
        Metric("passes", "Passes", "Answer contains ok.", is_primary=True, role=MetricRole.PASS),
        Metric("failures", "Failures", "Answer lacks ok.", higher_is_better=False, role=MetricRole.FAIL,
               raises_problems=False),
        Metric("retrieval_failures", "Retrieval failures", "Context lacks ok.", higher_is_better=False,
               role=MetricRole.RETRIEVAL_FAILURE),
        Metric("generation_failures", "Generation failures", "Same as failures.", higher_is_better=False,
               role=MetricRole.GENERATION_FAILURE, raises_problems=False),
        Metric("parse_failures", "Parse failures", "Answer was '??'.", higher_is_better=False,
               role=MetricRole.PARSE_FAILURE),
    )

    def check(self, row):
        if row.actual_output == "??":
            return Verdict(parse_error="cannot parse '??'")
        context_ok = ("ok" in " ".join(row.context)) if row.context else None
        ok = "ok" in row.actual_output
        return Verdict(answer_ok=ok, context_ok=context_ok, error_message=None if ok else "no 'ok' in the answer")


class ToyCrashEvaluator(Evaluator):
    id = "toy_crash"
    display_name = "Toy crash"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("nothing", "Nothing", "Never computed.", is_primary=True),)

    def evaluate(self, rows):
        raise RuntimeError("toy evaluator exploded")


class ToySlowEvaluator(Evaluator):
    id = "toy_slow"
    display_name = "Toy slow"
    required_inputs = (Input.ACTUAL_ANSWER,)
    parameters = (Param("factor", float, 1.0, "Multiplies the answer length.", min=0.0, max=10.0),)
    metrics = (Metric("length", "Length", "Characters in the answer, times factor.", value_range=(0, 1e9),
                      is_primary=True, threshold=1.0),)

    def evaluate(self, rows):
        for row in rows:
            time.sleep(float(os.environ.get("SONAR_TOY_SLEEP", "0")))
            yield RowResult(values={"length": len(row.actual_output) * self.params["factor"]})


@hookimpl
def register_evaluators(register):
    for cls in (ToyScoreEvaluator, ToyPassFailEvaluator, ToyCrashEvaluator, ToySlowEvaluator):
        register(cls)
