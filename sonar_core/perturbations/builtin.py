"""Sonar's own perturbators: a plugin the plugin manager registers before any other (see
:data:`sonar_core.plugins.BUILT_IN_PLUGINS`), through the ``register_perturbators`` hook like a plugin's."""

from __future__ import annotations

from ..hookspecs import hookimpl

#: The name this module is registered under with the plugin manager.
PLUGIN_NAME = "sonar.perturbations"


@hookimpl
def register_perturbators(register):
    from .encodings import Base16, Base64
    from .obfuscations import Homoglyphs, Leetspeak, Rot13
    from .fmeval_perturbators import ButterFinger, RandomUpperCase, WhitespaceAddRemove
    from .typos import CharDelete, CharInsert, CharSwap, QwertyTypos, WordSwap

    register("butter_finger", ButterFinger)
    register("random_upper_case", RandomUpperCase)
    register("whitespace_add_remove", WhitespaceAddRemove)
    register("qwerty_typos", QwertyTypos)
    register("char_insert", CharInsert)
    register("char_delete", CharDelete)
    register("char_swap", CharSwap)
    register("word_swap", WordSwap)
    register("base16", Base16)
    register("base64", Base64)
    register("rot13", Rot13)
    register("leetspeak", Leetspeak)
    register("homoglyphs", Homoglyphs)
