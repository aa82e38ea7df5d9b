"""Built-in RAGAS evaluators: the ragas library's metrics on the run's judge client and embedding service."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration; ragas itself only when rows are scored.
    from .answer_correctness import AnswerCorrectnessEvaluator
    from .answer_relevancy import AnswerRelevancyEvaluator
    from .context_precision import ContextPrecisionEvaluator
    from .context_recall import ContextRecallEvaluator
    from .context_relevancy import RagasContextRelevanceEvaluator
    from .faithfulness import FaithfulnessEvaluator
    from .ragas_score import RagasScoreEvaluator

    register(FaithfulnessEvaluator)
    register(AnswerRelevancyEvaluator)
    register(ContextPrecisionEvaluator)
    register(ContextRecallEvaluator)
    register(RagasContextRelevanceEvaluator)
    register(AnswerCorrectnessEvaluator)
    register(RagasScoreEvaluator)
