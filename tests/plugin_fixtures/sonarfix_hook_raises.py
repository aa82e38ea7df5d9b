"""A plugin whose hook registers one valid evaluator and then raises.

Nothing it staged may reach the registry: a plugin registers all of its evaluators or none.
"""

from sonar_core import Evaluator, Input, Metric, RowResult, hookimpl


class HalfRegisteredEvaluator(Evaluator):
    id = "fixture_half_registered"
    display_name = "Half registered"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("one", "One", "Always 1.", is_primary=True),)

    def evaluate(self, rows):
        return [RowResult(values={"one": 1.0}) for _ in rows]


@hookimpl
def register_evaluators(register):
    register(HalfRegisteredEvaluator)
    raise KeyError("missing_setting")
