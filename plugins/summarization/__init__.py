"""Built-in summarization evaluators."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .bleu import BleuEvaluator
    from .rouge import RougeEvaluator

    register(BleuEvaluator)
    register(RougeEvaluator)
