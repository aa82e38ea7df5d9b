"""Built-in semantic evaluators: sentence embeddings from the run's embedding service."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .answer_relevancy import AnswerRelevancySentenceSimilarityEvaluator
    from .answer_sentence_similarity import AnswerSemanticSentenceSimilarityEvaluator
    from .answer_similarity import AnswerSemanticSimilarityEvaluator
    from .context_relevancy import ContextRelevancySoftRecallPrecisionEvaluator
    from .groundedness import GroundednessSemanticSimilarityEvaluator
    from .step_alignment import StepAlignmentCompletenessEvaluator

    register(AnswerSemanticSimilarityEvaluator)
    register(AnswerSemanticSentenceSimilarityEvaluator)
    register(AnswerRelevancySentenceSimilarityEvaluator)
    register(GroundednessSemanticSimilarityEvaluator)
    register(ContextRelevancySoftRecallPrecisionEvaluator)
    register(StepAlignmentCompletenessEvaluator)
