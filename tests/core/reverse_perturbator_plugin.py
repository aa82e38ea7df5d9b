"""A plugin module (for ``-p`` / ``plugins:``) whose hook adds the perturbator ``reverse``."""

from sonar_core import Perturbator, hookimpl


class Reverse(Perturbator):
    description = "The text backwards."
    random = False

    def apply(self, text, rng):
        return text[::-1]


@hookimpl
def register_perturbators(register):
    register("reverse", Reverse)
