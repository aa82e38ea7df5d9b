"""A plugin whose hook has the right name but an argument the specification does not have."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(add):  # the spec's argument is called `register`
    raise AssertionError("a hook with a wrong signature must never be called")
