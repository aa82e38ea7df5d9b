"""Built-in consistency evaluators on local NLI-style models: hallucination and summarization faithfulness."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .hallucination import HallucinationEvaluator
    from .summarization_faithfulness import SummarizationFaithfulnessEvaluator

    register(HallucinationEvaluator)
    register(SummarizationFaithfulnessEvaluator)
