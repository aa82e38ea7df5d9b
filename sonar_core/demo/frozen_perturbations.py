"""The demo's own typo and whitespace perturbations, deliberately frozen.

These are not the registered ``qwerty_typos`` / ``char_swap`` / ``whitespace_add_remove``
perturbators: they draw from ``random.Random`` seeded with the perturbed test case's key and use
their own algorithms, and no registered perturbator gives the same text for the same seed (checked
when the demo's cases moved to data files). They stay as they are because the shipped demo dataset,
``demo_llm_dataset.json``, is fixed: its perturbed inputs, and the report numbers and docs built on
them, must not change when the registered perturbators evolve. Do not "improve" them; the test that
regenerates the dataset byte for byte fails if their output changes.

The demo's other perturbations (uppercase, base64, base16) are the registered perturbators, which do
give exactly the demo's text.
"""

from __future__ import annotations

import random

__all__ = ["typos", "extra_whitespace"]


def typos(text: str, seed: str) -> str:
    """Swap two adjacent inner letters in about a third of the longer words."""
    rng = random.Random(seed)
    words = text.split(" ")
    changed = False
    for i, word in enumerate(words):
        if len(word) > 4 and word[1:-1].isalpha() and rng.random() < 0.35:
            j = rng.randrange(1, len(word) - 2)
            words[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
            changed = changed or words[i] != word
    if not changed:  # make sure the copy differs from the original
        longest = max(range(len(words)), key=lambda k: len(words[k]))
        w = words[longest]
        words[longest] = w[:1] + w[2] + w[1] + w[3:]
    return " ".join(words)


def extra_whitespace(text: str, seed: str) -> str:
    """Replace some single spaces with runs of spaces, tabs or line breaks."""
    rng = random.Random(seed)
    runs = ["  ", "   ", "\t", " \n ", "    "]
    parts = text.split(" ")
    out = parts[0]
    for part in parts[1:]:
        out += (rng.choice(runs) if rng.random() < 0.45 else " ") + part
    return "  " + out + " \n"
