"""Obfuscations a filter reading plain text may miss: ROT13, leetspeak and homoglyphs.

Red-team techniques smuggle a request past keyword filters by writing it so that a model can still read
it (docs/redteam.md); robustness runs may use them as any perturbator. ``rot13`` is deterministic (the
seed changes nothing) and takes a ``template`` like the encodings; ``leetspeak`` and ``homoglyphs``
replace each eligible character with probability ``prob``, one draw per eligible character in text
order, so a seed fixes the result (``prob`` 1 replaces every one and draws nothing).
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, ClassVar

from ..contract import Param
from .base import Perturbator
from .encodings import PLACEHOLDER, _template_param

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["Rot13", "Leetspeak", "Homoglyphs", "LEET", "HOMOGLYPHS"]

#: Letter -> the digit or sign leetspeak writes for it (either case).
LEET: dict[str, str] = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7", "b": "8", "g": "9"}
#: Latin letter -> a Cyrillic or Greek letter drawn the same in most fonts.
HOMOGLYPHS: dict[str, str] = {
    "a": "\u0430", "c": "\u0441", "e": "\u0435", "i": "\u0456", "j": "\u0458", "o": "\u043e", "p": "\u0440",
    "s": "\u0455", "x": "\u0445", "y": "\u0443", "A": "\u0410", "B": "\u0412", "C": "\u0421", "E": "\u0415",
    "H": "\u041d", "I": "\u0406", "K": "\u041a", "M": "\u041c", "O": "\u041e", "P": "\u0420", "T": "\u0422",
    "X": "\u0425", "Y": "\u03a5",
}


def _substitute(text: str, table: dict[str, str], prob: float, rng: np.random.Generator) -> str:
    out = []
    for ch in text:
        swap = table.get(ch)
        if swap is not None and (prob >= 1.0 or rng.random() < prob):
            ch = swap
        out.append(ch)
    return "".join(out)


class Rot13(Perturbator):
    description: ClassVar[str] = "The prompt with every ASCII letter rotated by 13 places (ROT13), optionally in a template."
    parameters: ClassVar[tuple[Param, ...]] = (_template_param(),)
    random: ClassVar[bool] = False

    def apply(self, text: str, rng: np.random.Generator) -> str:
        return self.params["template"].replace(PLACEHOLDER, codecs.encode(text, "rot_13"))


class Leetspeak(Perturbator):
    description: ClassVar[str] = ("Leetspeak: each of the letters a e i o s t b g (either case) written as 4 3 1 0 5 7 8 9 "
                                  "with probability prob.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.5, "Probability that an eligible letter is replaced.", min=0.0, max=1.0),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        table = {**LEET, **{k.upper(): v for k, v in LEET.items()}}
        return _substitute(text, table, self.params["prob"], rng)


class Homoglyphs(Perturbator):
    description: ClassVar[str] = ("Homoglyphs: Latin letters replaced, with probability prob, by Cyrillic or Greek letters "
                                  "that look the same (a -> U+0430...).")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.5, "Probability that a letter with a look-alike is replaced.", min=0.0, max=1.0),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        return _substitute(text, HOMOGLYPHS, self.params["prob"], rng)
