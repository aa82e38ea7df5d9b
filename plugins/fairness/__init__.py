"""Built-in fairness evaluators on local classifiers: toxicity and fairness bias."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .fairness_bias import FairnessBiasEvaluator
    from .toxicity import ToxicityEvaluator

    register(ToxicityEvaluator)
    register(FairnessBiasEvaluator)
