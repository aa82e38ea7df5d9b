"""Deterministic synthetic summarization data for the ROUGE and BLEU benchmarks.

``make_rows(n)`` returns ``n`` LLM-dataset rows: ``n // 3`` expected answers (references),
each answered by 3 models. A reference is 20-120 tokens of sentence-like text (capitalised
first word, commas, a final period, now and then a number) drawn from a Zipf-weighted
vocabulary of common English words and their inflections (so the Porter stemmer has work to
do). A model's answer keeps a model-specific share of the reference's words in order and
replaces, drops or inserts the rest, then is trimmed or padded to 20-120 tokens; the three
models therefore score from close to far from the reference.
"""

from __future__ import annotations

import random
from itertools import accumulate

from sonar_core.dataset import Row
from sonar_core.testing import make_row

_BASE_WORDS = """
time year people way day man thing woman life child world school state family student group
country problem hand part place case week company system program question work government
number night point home water room mother area money story fact month lot right study book
eye job word business issue side kind head house service friend father power hour game line
end member law car city community name president team minute idea kid body information back
parent face others level office door health person art war history party result change
morning reason research girl guy moment air teacher force education foot boy age policy
process music market sense nation plan college interest death experience effect use class
control care field development role effort rate heart drug show leader light voice wife
police mind price report decision son view relationship town road arm difference value
building action model season society tax director position player record paper space
ground form event official matter center couple site project activity star table need
court oil situation cost industry figure street image phone data picture practice piece
land product doctor wall patient worker news test movie north love support technology
step baby computer type attention film tree source organization hair window evidence
population site truth reader wave summary answer evaluation metric score retrieval context
""".split()
_VERBS = """
run walk talk look play work help call move live believe hold bring happen write provide
sit stand lose pay meet include continue learn change lead understand watch follow stop
create speak read allow add spend grow open win offer remember consider appear buy wait
serve die send expect build stay fall cut reach kill remain suggest raise pass sell require
report decide pull return explain hope develop carry break receive agree support hit
produce eat cover catch draw choose cause point listen realize place close involve increase
""".split()
_FUNCTION_WORDS = """
the of and a to in is that it for on with as was at by be this have from or had not but
what all were when we there can an your which their said if do will each about how up out
them then she many some so these would other into has more her two like him see could no
make than been its who now my over did down only any very after also new just most where
""".split()


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _vocabulary() -> list[str]:
    words = list(_FUNCTION_WORDS)
    for noun in _BASE_WORDS:
        words += [noun, _plural(noun)]
    for verb in _VERBS:
        stem = verb[:-1] if verb.endswith("e") else verb
        words += [verb, _plural(verb), stem + "ed", stem + "ing"]
    return words


_VOCAB = _vocabulary()
# Zipf-like weights (1/rank) make function words frequent, as in real text.
_CUM_WEIGHTS = list(accumulate(1.0 / (rank + 1) ** 0.9 for rank in range(len(_VOCAB))))


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(_VOCAB, cum_weights=_CUM_WEIGHTS, k=k)


def _render(words: list[str], rng: random.Random) -> str:
    """Sentence-like text: capitals, commas, periods, the odd number."""
    out: list[str] = []
    start = True
    for i, word in enumerate(words):
        if rng.random() < 0.03:
            word = str(rng.randint(1, 2025))
        if start:
            word = word.capitalize()
            start = False
        if i == len(words) - 1 or rng.random() < 0.08:
            word += "."
            start = True
        elif rng.random() < 0.06:
            word += ","
        out.append(word)
    return " ".join(out)


def _answer(reference: list[str], keep: float, rng: random.Random) -> list[str]:
    """Reference words kept in order with probability ``keep``; others replaced or dropped."""
    out: list[str] = []
    for word in reference:
        roll = rng.random()
        if roll < keep:
            out.append(word)
        elif roll < keep + (1 - keep) / 2:
            out.extend(_words(rng, rng.randint(1, 2)))
        # else: dropped
    target = min(120, max(20, len(out) + rng.randint(-10, 10)))
    if len(out) < target:
        for _ in range(target - len(out)):
            out.insert(rng.randint(0, len(out)), _words(rng, 1)[0])
    return out[:target]


MODELS = {"model-close": 0.85, "model-middle": 0.6, "model-far": 0.3}


def make_rows(n: int = 10_000, seed: int = 0) -> list[Row]:
    """``n`` rows (``n // 3`` references x 3 models, plus leftovers for the first models)."""
    rng = random.Random(seed)
    rows: list[Row] = []
    n_refs = max(1, n // len(MODELS))
    case = 0
    while len(rows) < n:
        reference = _words(rng, rng.randint(20, 120))
        reference_text = _render(reference, rng)
        for model, keep in MODELS.items():
            if len(rows) == n:
                break
            rows.append(
                make_row(
                    key=f"tc{case}-{model}",
                    input=f"Summarise document {case}.",
                    expected_output=reference_text,
                    actual_output=_render(_answer(reference, keep, rng), rng),
                    model_key=model,
                    test_case_key=f"tc{case}",
                )
            )
        case += 1
    assert case >= n_refs
    return rows
