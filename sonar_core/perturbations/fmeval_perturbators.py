"""fmeval's three semantic perturbations, drawing from numpy's generator exactly as fmeval does.

fmeval (``fmeval.transforms.semantic_perturbations``) seeds ``numpy.random.default_rng(seed)`` once per
transform (default seed 5) and draws a text's ``num_perturbations`` copies from it one after the other.
Each class below makes the same draws, in the same order, with the same parameters and defaults, so
``perturb_many(text, name, seed, n)`` equals fmeval's ``perturb(text)`` for a transform built with
that seed and ``num_perturbations=n`` (the first of them is ``perturb(text, name, seed)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..contract import Param
from .base import Perturbator

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["ButterFinger", "RandomUpperCase", "WhitespaceAddRemove", "BUTTER_FINGER_KEYS"]

#: For each key, the keys a finger may hit instead (NL-Augmenter's table, which fmeval uses; the key
#: itself is among them, so a drawn "typo" sometimes leaves the letter as it was).
BUTTER_FINGER_KEYS: dict[str, str] = {
    "q": "qwasedzx", "w": "wqesadrfcx", "e": "ewrsfdqazxcvgt", "r": "retdgfwsxcvgt", "t": "tryfhgedcvbnju",
    "y": "ytugjhrfvbnji", "u": "uyihkjtgbnmlo", "i": "iuojlkyhnmlp", "o": "oipklujm", "p": "plo['ik",
    "a": "aqszwxwdce", "s": "swxadrfv", "d": "decsfaqgbv", "f": "fdgrvwsxyhn", "g": "gtbfhedcyjn",
    "h": "hyngjfrvkim", "j": "jhknugtblom", "k": "kjlinyhn", "l": "lokmpujn",
    "z": "zaxsvde", "x": "xzcsdbvfrewq", "c": "cxvdfzswergb", "v": "vcfbgxdertyn", "b": "bvnghcftyun",
    "n": "nbmhjvgtuik", "m": "mnkjloik", " ": " ",
}

_PROBABILITY = dict(min=0.0, max=1.0)


class ButterFinger(Perturbator):
    description: ClassVar[str] = (
        "Keyboard typos (fmeval's butter_finger): each letter is replaced, with probability "
        "perturbation_prob, by a key drawn from the keys around it; case is kept.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("perturbation_prob", float, 0.1, "Probability that a given letter is replaced.", **_PROBABILITY),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["perturbation_prob"]
        letters = []
        for letter in text:
            lower = letter.lower()
            new = lower
            if lower in BUTTER_FINGER_KEYS:
                # Every keyboard character draws, whether or not it then changes: fmeval's draw order.
                if rng.random() <= prob:
                    new = str(rng.choice(list(BUTTER_FINGER_KEYS[lower])))
            # fmeval lowercases every character and upper-cases it back when it was not lowercase.
            letters.append(new.upper() if lower != letter else new)
        return "".join(letters)


class RandomUpperCase(Perturbator):
    description: ClassVar[str] = (
        "Random upper case (fmeval's random_upper_case): int(len(text) * uppercase_fraction) characters, at "
        "distinct positions drawn at random, are put in upper case.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("uppercase_fraction", float, 0.1, "Fraction of the characters put in upper case.", **_PROBABILITY),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        count = int(len(text) * self.params["uppercase_fraction"])
        positions = set(rng.choice(range(len(text)), count, False).tolist())
        return "".join(ch.upper() if i in positions else ch for i, ch in enumerate(text))


class WhitespaceAddRemove(Perturbator):
    description: ClassVar[str] = (
        "Whitespace noise (fmeval's whitespace_add_remove): each whitespace character is removed with "
        "probability remove_prob; a space is put after each other character with probability add_prob.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("add_prob", float, 0.05, "Probability of a space after a non-whitespace character.", **_PROBABILITY),
        Param("remove_prob", float, 0.1, "Probability that a whitespace character is removed.", **_PROBABILITY),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        add, remove = self.params["add_prob"], self.params["remove_prob"]
        pieces = []
        for ch in text:
            p = rng.random()  # one draw per character, used by either test (as fmeval does)
            if ch.isspace():
                pieces.append("" if p < remove else ch)
            else:
                pieces.append(ch + " " if p < add else ch)
        return "".join(pieces)
