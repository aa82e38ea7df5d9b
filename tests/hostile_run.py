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
    """Run every installed offline evaluator over the dataset; returns the ExecutionResult."""
    dataset = write_hostile_dataset(folder)
    return sonar_core.run(dataset=str(dataset), evaluators=["offline"], output_dir=str(folder / "reports"),
                          run_id=run_id)


#: Payloads that would run script if any page let them through: markup, event handlers,
#: javascript: URLs, attribute and string breakouts, and a template expression. Each one
#: sets ``window.__pwned`` when it runs, so a browser test can tell.
PAYLOADS = (
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "javascript:window.__pwned='url'",
    "\"><svg onload=\"window.__pwned='svg'\">",
    "'><a href=\"javascript:window.__pwned='a'\" onmouseover=\"window.__pwned='hover'\">x</a>",
    "</textarea></title></style></script><script>window.__pwned='close'</script>",
    "{{ 7 * 7 }}';window.__pwned='js-string';//",
)


def _payload(n: int, label: str) -> str:
    return f"{label} {PAYLOADS[n % len(PAYLOADS)]}"


def everywhere_rows() -> list[dict]:
    """Rows with a payload in every text field and key, including the perturbation link."""
    models = [_payload(n, f"model{n}") for n in range(3)]
    cases = [_payload(n + 3, f"case{n}") for n in range(3)]
    rows = []
    for c, case in enumerate(cases):
        for m, model in enumerate(models):
            n = c * 3 + m
            row = {
                "key": _payload(n + 1, f"key{n}"),
                "test_case_key": case,
                "model_key": model,
                "test_key": _payload(n + 2, "test"),
                "input": _payload(n + 3, "question"),
                "expected_output": _payload(n + 4, "expected"),
                # Rows of the first model get a payload as their condition (a malformed one,
                # whose error message quotes it); the others' conditions and constraints hold
                # on answer and context, so that the encoding guardrail (a privacy evaluator
                # that checks conditions) lets their answers and contexts be shown.
                "context": [_payload(n, "answer") + " chunk", _payload(n + 6, "answer chunk")],
                "categories": [_payload(c, "category"), "base64"],
                "output_condition": PAYLOADS[n % len(PAYLOADS)] if m == 0 else '"answer"',
                "output_constraints": [_payload(n + 1, "constraint") if m == 0 else _payload(n, "answer")],
                # One long answer to expand, outside the first test case (the language-model evaluators'
                # subset, see LANGUAGE_MODEL_EVALUATORS).
                "actual_output": _payload(n, "answer") * (40 if (c, m) == (1, 0) else 1),
                "corpus": [_payload(n + 2, "corpus")],
                "actual_duration": 0.25 * (m + 1),
                "cost": 0.001 * (3 - m),
            }
            if c == 2:
                row.update(original_test_case_key=cases[0], perturbation=_payload(n, "perturbation"))
            rows.append(row)
    return rows


#: Evaluators that run a causal LM per row: one test case each (the first, whose answers are short;
#: the 40-fold answer is in the second) keeps them in the audit without minutes of CPU forward passes.
LANGUAGE_MODEL_EVALUATORS = ("perplexity", "gptscore_question_answering", "gptscore_machine_translation",
                             "gptscore_summarization_with_reference", "gptscore_summarization_without_reference")


def run_everywhere(folder: Path, run_id: str = "everywhere"):
    """Every installed offline evaluator over :func:`everywhere_rows`; returns the ExecutionResult."""
    path = folder / "everywhere.json"
    path.write_text(json.dumps(everywhere_rows(), ensure_ascii=False, indent=1), encoding="utf-8")
    evaluators = [{"id": eid, "max_rows": 3} for eid in LANGUAGE_MODEL_EVALUATORS] + ["offline"]
    return sonar_core.run(dataset=str(path), evaluators=evaluators, output_dir=str(folder / "reports"), run_id=run_id)
