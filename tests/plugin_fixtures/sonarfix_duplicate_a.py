"""First of two plugins that register the same evaluator id, ``fixture_twin``."""

from sonar_core import Evaluator, Input, Metric, RowResult, hookimpl


class TwinA(Evaluator):
    id = "fixture_twin"
    display_name = "Twin A"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("one", "One", "Always 1.", is_primary=True),)

    def evaluate(self, rows):
        return [RowResult(values={"one": 1.0}) for _ in rows]


@hookimpl
def register_evaluators(register):
    register(TwinA)
