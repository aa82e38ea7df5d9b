"""Ten rows (five cases, two models) for the RAGAS tests, and their values worked out by hand from the rules
of the scripted judge (tests/ragas_judge.py). Values that need an embedding (answer relevancy of an off-topic
answer, semantic similarity) are given as the texts whose cosine the test computes with the embedding model.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES = {
    "c1": {
        "input": "Where is the Eiffel Tower?",
        "context": ["The Eiffel Tower is in Paris.", "The Louvre is a museum.", "The Eiffel Tower opened in 1889."],
        "expected_output": "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889.",
        "good": "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889.",
        "weak": "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889. The Eiffel Tower is painted gold. "
                "The Eiffel Tower is in Rome.",
    },
    "c2": {
        "input": "Who wrote Hamlet?",
        "context": ["Hamlet is a tragedy.", "William Shakespeare wrote Hamlet."],
        "expected_output": "William Shakespeare wrote Hamlet.",
        "good": "William Shakespeare wrote Hamlet. Hamlet is a tragedy.",
        "weak": "I don't know who wrote Hamlet.",
    },
    "c3": {
        "input": "What is the boiling point of water at sea level?",
        "context": ["Water boils at 100 degrees Celsius at sea level."],
        "expected_output": "Water boils at 100 degrees Celsius at sea level.",
        "good": "Water boils at 100 degrees Celsius at sea level.",
        "weak": "Off topic. Water boils at 100 degrees Celsius at sea level.",
    },
    "c4": {
        "input": "What colour is the sky on a clear day?",
        "context": ["The sky is blue on a clear day.", "Grass is green."],
        "expected_output": "The sky is blue on a clear day. Clouds are white.",
        "good": "The sky is blue on a clear day.",
        "weak": "The sky is blue on a clear day. Grass is green. The sky is green at night.",
    },
    "c5": {
        "input": "What is the capital of Japan?",
        "context": ["Tokyo is the capital of Japan."],
        "expected_output": "Tokyo is the capital of Japan.",
        "good": "Tokyo is the capital of Japan.",
        "weak": "GARBLE Tokyo.",  # the judge's statement extraction answers this one with no JSON
    },
}
MODELS = ("good", "weak")

#: (case, model) -> value, by hand. None: a parse failure.
FAITHFULNESS = {
    ("c1", "good"): 1.0, ("c1", "weak"): 2 / 4,  # gold and Rome are not in the context
    ("c2", "good"): 1.0, ("c2", "weak"): 0.0,
    ("c3", "good"): 1.0, ("c3", "weak"): 1 / 2,  # "Off topic." is a claim the context does not hold
    ("c4", "good"): 1.0, ("c4", "weak"): 2 / 3,
    ("c5", "good"): 1.0, ("c5", "weak"): None,
}
#: Average precision of the chunk verdicts (same for both models: it reads question, reference, context).
CONTEXT_PRECISION = {"c1": (1 / 1 + 2 / 3) / 2,  # useful, not, useful
                     "c2": (1 / 2) / 1,          # not, useful
                     "c3": 1.0, "c4": 1.0, "c5": 1.0}
CONTEXT_RECALL = {"c1": 1.0, "c2": 1.0, "c3": 1.0, "c4": 1 / 2, "c5": 1.0}
#: Both prompts rate 2 (every chunk useful), 1 (some) or 0; score = (r + r) / 4.
CONTEXT_RELEVANCY = {"c1": 0.5, "c2": 0.5, "c3": 1.0, "c4": 0.5, "c5": 1.0}
#: (TP, FP, FN) of the correctness classification.
CORRECTNESS_COUNTS = {
    ("c1", "good"): (2, 0, 0), ("c1", "weak"): (2, 2, 0),
    ("c2", "good"): (1, 1, 0), ("c2", "weak"): (0, 1, 1),
    ("c3", "good"): (1, 0, 0), ("c3", "weak"): (1, 1, 0),
    ("c4", "good"): (1, 0, 1), ("c4", "weak"): (1, 2, 1),
    ("c5", "good"): (1, 0, 0), ("c5", "weak"): None,
}


def rows() -> list[dict]:
    return [{"test_case_key": case, "model_key": model, "input": c["input"], "context": c["context"],
             "expected_output": c["expected_output"], "actual_output": c[model], "categories": ["rag"]}
            for case, c in CASES.items() for model in MODELS]


def write_dataset(path: Path) -> Path:
    path.write_text(json.dumps(rows()), encoding="utf-8")
    return path

