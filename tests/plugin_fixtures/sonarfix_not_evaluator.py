"""A plugin that registers a class which is not a sonar_core.Evaluator."""

from sonar_core import hookimpl


class NotAnEvaluator:
    id = "fixture_not_evaluator"

    def evaluate(self, rows):
        return []


@hookimpl
def register_evaluators(register):
    register(NotAnEvaluator)
