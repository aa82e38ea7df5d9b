"""Red-team detectors: whether an attack succeeded, per answer (docs/redteam.md)."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .canary_leak import CanaryLeakEvaluator
    from .harmful_compliance import HarmfulComplianceEvaluator
    from .injection_marker import InjectionMarkerEvaluator
    from .private_data_leak import PrivateDataLeakEvaluator
    from .refusal import RefusalEvaluator

    register(CanaryLeakEvaluator)
    register(InjectionMarkerEvaluator)
    register(PrivateDataLeakEvaluator)
    register(RefusalEvaluator)
    register(HarmfulComplianceEvaluator)
