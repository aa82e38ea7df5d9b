"""Built-in robustness evaluators: models asked again with perturbed prompts."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .general_semantic_robustness import GeneralSemanticRobustnessEvaluator

    register(GeneralSemanticRobustnessEvaluator)
