"""Sonar example plugin: registers the answer-length evaluator.

Sonar imports this module when it loads the ``example`` entry point of the ``sonar.plugins``
group, then calls the hooks below. Keep this module cheap to import: evaluator modules (and
whatever heavy libraries they need) are imported inside the hook, so a user who never runs
them never pays for them.
"""

from sonar_core import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_evaluators(register):
    from .answer_length import AnswerLengthEvaluator

    register(AnswerLengthEvaluator)
