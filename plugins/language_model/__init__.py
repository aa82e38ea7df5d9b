"""Built-in evaluators that score texts with a local causal language model: perplexity and GPTScore."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .gptscore_question_answering import GptScoreQuestionAnsweringEvaluator
    from .gptscore_summarization import GptScoreSummarizationEvaluator
    from .gptscore_summarization_reference import GptScoreSummarizationReferenceEvaluator
    from .gptscore_translation import GptScoreTranslationEvaluator
    from .perplexity import PerplexityEvaluator

    register(PerplexityEvaluator)
    register(GptScoreSummarizationReferenceEvaluator)
    register(GptScoreSummarizationEvaluator)
    register(GptScoreTranslationEvaluator)
    register(GptScoreQuestionAnsweringEvaluator)
