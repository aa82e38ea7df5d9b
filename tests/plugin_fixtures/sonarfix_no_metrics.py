"""A plugin whose evaluator declares no metrics."""

from sonar_core import Evaluator, Input, RowResult, hookimpl


class NoMetricsEvaluator(Evaluator):
    id = "fixture_no_metrics"
    display_name = "No metrics"
    required_inputs = (Input.ACTUAL_ANSWER,)

    def evaluate(self, rows):
        return [RowResult(values={}) for _ in rows]


@hookimpl
def register_evaluators(register):
    register(NoMetricsEvaluator)
