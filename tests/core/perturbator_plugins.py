"""Plugins for the perturbator registry tests: one adds a perturbator, one takes a built-in's name,
one raises while registering."""

from sonar_core import Perturbator, hookimpl


class Reverse(Perturbator):
    description = "The text backwards."
    random = False

    def apply(self, text, rng):
        return text[::-1]


class AddingPlugin:
    @hookimpl
    def register_perturbators(self, register):
        register("reverse", Reverse)


class DuplicatePlugin:
    @hookimpl
    def register_perturbators(self, register):
        register("butter_finger", Reverse)


class RaisingPlugin:
    @hookimpl
    def register_perturbators(self, register):
        raise RuntimeError("no perturbators today")


adding = AddingPlugin()
duplicate = DuplicatePlugin()
raising = RaisingPlugin()
