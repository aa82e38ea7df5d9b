"""Built-in knowledge evaluators."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .factual_knowledge import FactualKnowledgeEvaluator

    register(FactualKnowledgeEvaluator)
