"""A deterministic model under test for the robustness demo: a lookup table with planted fragility.

It answers a question when every keyword of one of its entries appears in it as a whole word
(case and punctuation do not matter), so the exact question, or one reworded around the keywords,
gets the right answer. A typo inside a keyword ("captial", "Frnace") breaks the match and the
host falls back to a confident wrong answer: exactly the fragility perturbation tests should catch.
Use it as ``callable: "sonar_core.demo.lookup_host:answer"`` in a ``python`` host.
"""

from __future__ import annotations

import re

__all__ = ["TABLE", "FALLBACK", "answer"]

#: (keywords that must all appear, the answer)
TABLE: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"capital", "france"}), "The capital of France is Paris."),
    (frozenset({"capital", "japan"}), "The capital of Japan is Tokyo."),
    (frozenset({"largest", "planet"}), "Jupiter is the largest planet in the Solar System."),
    (frozenset({"boiling", "water"}), "Water boils at 100 degrees Celsius at sea level."),
    (frozenset({"wrote", "hamlet"}), "William Shakespeare wrote Hamlet."),
    (frozenset({"chemical", "gold"}), "The chemical symbol for gold is Au."),
    (frozenset({"continents"}), "There are seven continents."),
    (frozenset({"speed", "light"}), "Light travels at about 300,000 kilometres per second."),
    (frozenset({"painted", "lisa"}), "Leonardo da Vinci painted the Mona Lisa."),
    (frozenset({"legs", "spider"}), "A spider has eight legs."),
)
FALLBACK = "I believe the answer is 42."

_WORD = re.compile(r"[a-z0-9]+")


def answer(prompt: str) -> str:
    words = set(_WORD.findall(prompt.lower()))
    for keywords, reply in TABLE:
        if keywords <= words:
            return reply
    return FALLBACK
