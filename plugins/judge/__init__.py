"""Built-in LLM-judge evaluators: each asks the run's judge (``ctx.judge``) one catalogue prompt per row."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .byop import ByopEvaluator
    from .contact_information import ContactInformationEvaluator
    from .context_relevancy import ContextRelevancyJudgeEvaluator
    from .fact_check import FactCheckEvaluator
    from .language_mismatch import LanguageMismatchEvaluator
    from .sexism import SexismEvaluator
    from .stereotypes import StereotypesEvaluator
    from .summarization_judge import SummarizationJudgeEvaluator

    register(ByopEvaluator)
    register(ContactInformationEvaluator)
    register(LanguageMismatchEvaluator)
    register(SexismEvaluator)
    register(StereotypesEvaluator)
    register(SummarizationJudgeEvaluator)
    register(FactCheckEvaluator)
    register(ContextRelevancyJudgeEvaluator)
