"""Built-in LLM-judge evaluators: each asks the run's judge (``ctx.judge``) one catalogue prompt per row."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .byop import ByopEvaluator
    from .contact_information import ContactInformationEvaluator
    from .context_relevancy import ContextRelevancyJudgeEvaluator
    from .conversation_relevancy import ConversationRelevancyEvaluator
    from .fact_check import FactCheckEvaluator
    from .goal_accuracy import GoalAccuracyEvaluator
    from .knowledge_retention import KnowledgeRetentionEvaluator
    from .language_mismatch import LanguageMismatchEvaluator
    from .role_adherence import RoleAdherenceEvaluator
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
    # Conversations (docs/conversations.md).
    register(GoalAccuracyEvaluator)
    register(ConversationRelevancyEvaluator)
    register(KnowledgeRetentionEvaluator)
    register(RoleAdherenceEvaluator)
