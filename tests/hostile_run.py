"""A small multi-model dataset full of strings that must be escaped, and a run over it.

Shared by the result-directory tests (tests/test_result_directory.py) and the browser test
(tests/test_index_html_browser.py). Every row carries all five catalogue inputs (question,
expected answer, retrieved context, conditions, actual answer) so that every installed
offline evaluator can score it.
"""

from __future__ import annotations

import json
from pathlib import Path

import sonar_core

#: Model names: HTML markup, an ampersand, both quote kinds, non-ASCII letters.
MODEL_SCRIPT = 'gpt-<script>alert("pwn")</script>'
MODEL_UNICODE = "llama & 'friends' — ünïcödé ✓"
MODEL_PLAIN = "plain-model"
MODELS = (MODEL_SCRIPT, MODEL_UNICODE, MODEL_PLAIN)

QUESTION_PARIS = 'What is the capital of France? ("city" & country) — café'
#: A wrong answer holding markup: it fails most evaluators, so it is listed among the
#: weakest answers of the HTML fragments.
HOSTILE_ANSWER = "Lyon <script>alert('x')</script> & <b>bold</b> \"quoted\" — naïve"

# (test case, question, expected answer, context, condition, answers per model)
_CASES = [
    ("tc-paris", QUESTION_PARIS, "Paris", ["Paris is the capital of France."], '"Paris"',
     {MODEL_SCRIPT: "Paris, of course.", MODEL_UNICODE: HOSTILE_ANSWER, MODEL_PLAIN: "Paris"}),
    ("tc-sum", "What is 2 + 2?", "4", ["Arithmetic: 2 + 2 = 4."], '"4"',
     {MODEL_SCRIPT: "4", MODEL_UNICODE: "four", MODEL_PLAIN: "It is 4."}),
    ("tc-tokyo", "Which city is Japan's capital?", "Tokyo", ["Tokyo is the capital of Japan."], '"Tokyo"',
     {MODEL_SCRIPT: "Tokyo", MODEL_UNICODE: "Kyoto, I believe.", MODEL_PLAIN: "Osaka"}),
]


def hostile_rows() -> list[dict]:
    rows = []
    for n, (case, question, expected, context, condition, answers) in enumerate(_CASES):
        for m, model in enumerate(MODELS):
            rows.append({
                "test_case_key": case,
                "model_key": model,
                "input": question,
                "expected_output": expected,
                "context": context,
                "output_condition": condition,
                "actual_output": answers[model],
                "actual_duration": 0.5 + n + m,
                "cost": 0.001 * (m + 1),
            })
    return rows


def write_hostile_dataset(folder: Path) -> Path:
    path = folder / "hostile_dataset.json"
    path.write_text(json.dumps(hostile_rows(), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def run_hostile(folder: Path, run_id: str = "hostile"):
    """Run every installed offline evaluator over the dataset; returns the RunResult."""
    dataset = write_hostile_dataset(folder)
    return sonar_core.run(dataset=str(dataset), evaluators=["offline"], output_dir=str(folder / "reports"),
                          run_id=run_id)
