"""A plugin whose hook name is misspelt (``register_evaluator``, no final s)."""

from sonar_core import hookimpl


@hookimpl
def register_evaluator(register):  # the spec is register_evaluators
    raise AssertionError("a misspelt hook must never be called")
