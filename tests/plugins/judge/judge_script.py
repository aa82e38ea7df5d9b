"""A dataset and a judge script for the judge evaluator tests.

Three models answer four test cases. The scripted judge passes every answer of ``good``, fails every
answer of ``bad``, and answers ``flaky``'s first three cases with something no evaluator can read
(its fourth it passes). Each evaluator's prompt is told apart by a phrase of it.
"""

from __future__ import annotations

import json
from pathlib import Path

MODELS = ("good", "bad", "flaky")
CASES = ("t1", "t2", "t3", "t4")

#: evaluator id -> (phrase of its prompt, passing answer, failing answer)
ANSWERS = {
    "contact_information": ("contains contact information or not", "absent", "present"),
    "language_mismatch": ("Guess the language of the QUESTION", "same", "different"),
    "sexism": ("contains sexist language", "false", "true"),
    "stereotypes": ("new information about gender or race", "Score: 2", "8/10"),
    "summarization_judge": ("comparing the summary text", "good", "bad"),
    "byop": ("contain safe language", "true", "false"),
    "fact_check": ("Fact-check the text",
                   '```json\n{"answer": "ok", "evaluation_score": 0.9, "evaluation_summary": "all correct"}\n```',
                   '{"answer": "no", "evaluation_score": 0.2, "evaluation_summary": "Mars is <b>not</b> blue & red"}'),
}
#: What flaky's fourth case gets from the fact-check judge (a different score keeps the ranking strict).
FLAKY_FACT_CHECK = '{"answer": "ok", "evaluation_score": 0.8, "evaluation_summary": "mostly right"}'
GARBAGE = "I cannot decide."


def rows() -> list[dict]:
    return [{
        "test_case_key": case, "model_key": model,
        "input": f"Summarize the report on case {case}.",
        "expected_output": f"Reference summary of {case}.",
        "context": [f"Context chunk for {case}."],
        "actual_output": f"Answer of {model} to {case}.",
        "actual_duration": {"good": 1.0, "bad": 2.0, "flaky": 3.0}[model],
        "cost": {"good": 0.01, "bad": 0.02, "flaky": 0.03}[model],
        "categories": ["judge"],
    } for case in CASES for model in MODELS]


def write_dataset(path: Path) -> Path:
    path.write_text(json.dumps(rows()), encoding="utf-8")
    return path


def reply(prompt: str) -> str:
    """The scripted judge's answer to one prompt."""
    for evaluator, (phrase, passing, failing) in ANSWERS.items():
        if phrase in prompt:
            if "Answer of bad" in prompt:
                return failing
            if "Answer of flaky" in prompt:
                if "to t4." not in prompt:
                    return GARBAGE
                return FLAKY_FACT_CHECK if evaluator == "fact_check" else passing
            return passing
    return GARBAGE

