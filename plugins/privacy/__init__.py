"""Built-in privacy evaluators."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .encoding_guardrail import EncodingGuardrailEvaluator
    from .pii_leakage import PiiLeakageEvaluator
    from .sensitive_data_leakage import SensitiveDataLeakageEvaluator

    register(PiiLeakageEvaluator)
    register(SensitiveDataLeakageEvaluator)
    register(EncodingGuardrailEvaluator)
