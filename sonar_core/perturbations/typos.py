"""Character- and word-level noise: QWERTY typos, inserted / deleted / swapped characters, swapped words.

Every random choice comes from the generator ``apply`` is given, one draw per eligible position in text
order, so a seed fixes the result.
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING, ClassVar

from ..contract import Param
from .base import Perturbator

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["QwertyTypos", "CharInsert", "CharDelete", "CharSwap", "WordSwap", "QWERTY_NEIGHBOURS"]

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, str]:
    """Keys touching each letter on a staggered QWERTY keyboard (the letter itself excluded)."""
    found: dict[str, str] = {}
    for r, row in enumerate(_ROWS):
        for i, key in enumerate(row):
            near = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            if r > 0:  # each row sits half a key right of the one above
                near += [_ROWS[r - 1][j] for j in (i, i + 1) if j < len(_ROWS[r - 1])]
            if r + 1 < len(_ROWS):
                near += [_ROWS[r + 1][j] for j in (i - 1, i) if 0 <= j < len(_ROWS[r + 1])]
            found[key] = "".join(sorted(near))
    return found


#: Letter -> the letters whose keys touch it (``g`` -> ``bfhtvy``).
QWERTY_NEIGHBOURS: dict[str, str] = _neighbours()
_PROB = dict(min=0.0, max=1.0)


class QwertyTypos(Perturbator):
    description: ClassVar[str] = (
        "QWERTY typos: each ASCII letter is replaced, with probability typo_prob, by a letter whose key touches "
        "it (always a different letter); case is kept.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("typo_prob", float, 0.05, "Probability that a letter is mistyped.", **_PROB),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["typo_prob"]
        out = []
        for ch in text:
            near = QWERTY_NEIGHBOURS.get(ch.lower()) if ch.isascii() else None
            if near and rng.random() < prob:
                typo = near[int(rng.integers(len(near)))]
                ch = typo.upper() if ch.isupper() else typo
            out.append(ch)
        return "".join(out)


class CharInsert(Perturbator):
    description: ClassVar[str] = (
        "Inserted characters: after each non-whitespace character, with probability prob, a random lowercase "
        "ASCII letter is inserted.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.05, "Probability of an insertion after a character.", **_PROB),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["prob"]
        out = []
        for ch in text:
            out.append(ch)
            if not ch.isspace() and rng.random() < prob:
                out.append(string.ascii_lowercase[int(rng.integers(26))])
        return "".join(out)


class CharDelete(Perturbator):
    description: ClassVar[str] = "Deleted characters: each non-whitespace character is dropped with probability prob."
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.05, "Probability that a character is deleted.", **_PROB),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["prob"]
        return "".join(ch for ch in text if ch.isspace() or rng.random() >= prob)


class CharSwap(Perturbator):
    description: ClassVar[str] = (
        "Swapped characters: each pair of adjacent non-whitespace characters is swapped with probability prob "
        "(a swapped character is not swapped again).")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.05, "Probability that a pair of adjacent characters is swapped.", **_PROB),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["prob"]
        chars = list(text)
        i = 0
        while i + 1 < len(chars):
            if not chars[i].isspace() and not chars[i + 1].isspace() and rng.random() < prob:
                chars[i], chars[i + 1] = chars[i + 1], chars[i]
                i += 2
            else:
                i += 1
        return "".join(chars)


class WordSwap(Perturbator):
    description: ClassVar[str] = (
        "Swapped words: each pair of adjacent words is swapped with probability prob (a swapped word is not "
        "swapped again); whitespace stays where it was.")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("prob", float, 0.1, "Probability that a pair of adjacent words is swapped.", **_PROB),
    )

    def apply(self, text: str, rng: np.random.Generator) -> str:
        prob = self.params["prob"]
        # Words at even positions, the whitespace between them at odd ones.
        parts = re.split(r"(\s+)", text)
        words = [i for i, part in enumerate(parts) if part and not part.isspace()]
        k = 0
        while k + 1 < len(words):
            if rng.random() < prob:
                a, b = words[k], words[k + 1]
                parts[a], parts[b] = parts[b], parts[a]
                k += 2
            else:
                k += 1
        return "".join(parts)
