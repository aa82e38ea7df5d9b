"""A well-formed plugin: one score evaluator, ``fixture_length``, the answer's length in characters / 100."""

from sonar_core import Evaluator, Input, Metric, RowResult, hookimpl


class FixtureLengthEvaluator(Evaluator):
    id = "fixture_length"
    display_name = "Fixture length"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (
        Metric("chars", "Characters / 100", "Characters of the answer / 100, at most 1.", is_primary=True),
    )

    def evaluate(self, rows):
        for row in rows:
            yield RowResult(values={"chars": min(len(row.actual_output) / 100, 1.0)})


@hookimpl
def register_evaluators(register):
    register(FixtureLengthEvaluator)
