"""Deterministic synthetic RAG rows for the embedding evaluator benchmark.

``make_records(n)`` returns ``n`` LLM-dataset records (dicts): test cases answered by three
models (the last case answered by fewer when ``n`` is not a multiple of 3). A test case is
about one made-up insurance product: a question, an expected answer of two sentences, and a
retrieved context of three chunks (facts about the product; for half of the cases a numbered
procedure of 3-6 steps, else more facts; facts about another product). The models answer
faithfully (context sentences, the procedure as "First ... Then ... Finally"), partially (a
step dropped, or one fact and a stock phrase), or with an invented sentence, so scores spread out.
"""

from __future__ import annotations

import random

MODELS = ("faithful-model", "partial-model", "inventive-model")
_PRODUCTS = ["HomeGuard", "AutoPlus", "PawsCare", "TravelSure", "LifeSecure", "BoatCover", "RentSafe", "BikeShield",
             "HealthFirst", "FarmGuard", "CyberSafe", "GadgetCare"]
_THINGS = ["storm damage", "theft", "water leaks", "broken glass", "fire", "vet bills", "trip cancellations",
           "lost luggage", "roadside assistance", "liability claims", "flood damage", "stolen phones",
           "hospital stays", "legal costs", "rental cars", "frozen pipes"]
_APPS = ["Northwind app", "customer portal", "claims website", "mobile app"]
_MENUS = ["Claims", "Policies", "Documents", "Billing", "Settings", "Support"]
_ACTIONS = ["upload photos of the damage", "enter the date of the incident", "add the police report number",
            "choose the affected policy", "describe what happened", "attach the repair estimate",
            "confirm your bank details", "select a repair shop", "sign the declaration", "add witness details",
            "upload the receipts", "pick a callback time"]
_INVENTED = ["Claims are always approved within one hour.", "The premium is refunded in full every year.",
             "You can also claim for lottery losses.", "Astronauts get a free upgrade on request.",
             "Payments are made in gold coins on Fridays."]


def _facts(rng: random.Random, product: str, k: int) -> list[str]:
    templates = [
        lambda: f"{product} covers {rng.choice(_THINGS)} up to {rng.randrange(5, 500) * 100} dollars.",
        lambda: f"Claims for {rng.choice(_THINGS)} under {product} must be filed within {rng.randrange(7, 120)} days.",
        lambda: f"The {product} deductible is {rng.randrange(1, 40) * 25} dollars per claim.",
        lambda: f"{product} does not cover {rng.choice(_THINGS)} caused by {rng.choice(['neglect', 'wear', 'war'])}.",
        lambda: f"Approved {product} claims are paid within {rng.randrange(2, 30)} business days.",
        lambda: f"A {product} policy can be cancelled with {rng.randrange(1, 12)} weeks of notice.",
    ]
    return [rng.choice(templates)() for _ in range(k)]


def _steps(rng: random.Random, product: str) -> list[str]:
    middle = rng.sample(_ACTIONS, rng.randrange(1, 5))
    return ([f"Open the {rng.choice(_APPS)} and sign in to your {product} account.",
             f"Tap {rng.choice(_MENUS)} and choose New claim."]
            + [action[0].upper() + action[1:] + "." for action in middle]
            + [f"Submit the claim and note the {product} claim number."])[:6]


def _lower_first(text: str) -> str:
    return text[0].lower() + text[1:]


def _case(rng: random.Random, index: int) -> tuple[dict, dict[str, str]]:
    product, other = rng.sample(_PRODUCTS, 2)
    facts = _facts(rng, product, rng.randrange(2, 4))
    procedure = _steps(rng, product) if rng.random() < 0.5 else []
    chunks = [" ".join(facts),
              "To file a claim:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(procedure, 1)) if procedure
              else " ".join(_facts(rng, product, 2)),
              " ".join(_facts(rng, other, 2))]
    if procedure:
        question = f"How do I file a {product} claim for {rng.choice(_THINGS)}?"
        expected = f"{facts[0]} File it in {len(procedure)} steps, starting with: {_lower_first(procedure[0])}"
        sequence = ["First, ", "Then ", "Next, ", "After that, ", "Then ", "Finally, "]
        faithful = " ".join(w + _lower_first(s) for w, s in zip(sequence[:len(procedure) - 1] + ["Finally, "],
                                                                procedure))
        dropped = procedure[:1] + procedure[2:]
        partial = "\n".join(f"- {s}" for s in dropped)
        inventive = faithful + " " + rng.choice(_INVENTED)
    else:
        question = f"What does {product} say about {rng.choice(_THINGS)}, case {index}?"
        expected = " ".join(facts[:2])
        faithful = " ".join(facts)
        partial = facts[0] + " Please check your policy for details."
        inventive = f"{facts[0]} {rng.choice(_INVENTED)}"
    case = {"test_case_key": f"case-{index:05d}", "input": question, "expected_output": expected, "context": chunks,
            "categories": ["rag"]}
    return case, dict(zip(MODELS, (faithful, partial, inventive)))


def make_records(n: int, seed: int = 6) -> list[dict]:
    """``n`` records, three models per test case; see the module docstring."""
    rng = random.Random(seed)
    records: list[dict] = []
    index = 0
    while len(records) < n:
        case, answers = _case(rng, index)
        for model, answer in answers.items():
            if len(records) < n:
                records.append({**case, "model_key": model, "actual_output": answer,
                                "actual_duration": round(rng.uniform(0.3, 3.0), 3)})
        index += 1
    return records
