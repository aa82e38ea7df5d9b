"""Built-in text evaluators."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .looping_detection import LoopingDetectionEvaluator
    from .text_matching import TextMatchingEvaluator

    register(TextMatchingEvaluator)
    register(LoopingDetectionEvaluator)
