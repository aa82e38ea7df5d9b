"""Built-in classification evaluators."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .classification import ClassificationEvaluator

    register(ClassificationEvaluator)
