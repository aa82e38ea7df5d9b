"""Second of two plugins that register the same evaluator id, ``fixture_twin``."""

from sonar_core import Evaluator, Input, Metric, RowResult, hookimpl


class TwinB(Evaluator):
    id = "fixture_twin"
    display_name = "Twin B"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("zero", "Zero", "Always 0.", is_primary=True),)

    def evaluate(self, rows):
        return [RowResult(values={"zero": 0.0}) for _ in rows]


@hookimpl
def register_evaluators(register):
    register(TwinB)
