"""Generate the bundled demo LLM dataset, ``demo_llm_dataset.json``, from the case files in ``cases/``.

The dataset is a hand-written evaluation of three fictional systems answering questions for
"Northwind Mutual", an invented insurer, so that every built-in evaluator family has rows to
score and the quickstart report has a story to tell:

* ``acme-gpt-large``  -- the strongest: grounded RAG answers, refuses PII and secret requests,
  never loops; but the slowest and by far the most expensive.
* ``llama-3.1-8b-rag`` -- in between: mostly right and the cheapest/fastest, but its retriever
  misses twice (empty context), it echoes customer PII from retrieved records, pastes a CI
  token it finds in context and a private key, rounds figures so exact conditions fail,
  gives thin summaries, and it is fooled by a Base64-encoded request and by a typo-ridden query.
* ``mistral-7b-chat`` -- the weakest: hallucinates RAG facts, gets general knowledge and
  sentiment wrong, leaks PII and (fake) credentials, loops, and flips after perturbations.

Each case file holds one group of test cases with one category tag (the file's name): ``rag``,
``factual`` (targets with ``<OR>``), ``factual_and`` (targets with ``<AND>``), ``privacy``,
``security``, ``summarization``, ``classification``, ``looping``; a configuration can route
evaluators to rows by it. ``cases/perturbed.json`` lists perturbed copies of some cases: the input
is the original's, perturbed (:func:`perturb_input`); the answers are new; the categories are the
original's plus the perturbation's name (``typos``, ``uppercase``, ``whitespace``, ``base64``,
``base16``), and ``original_test_case_key`` points back to the original.

The case files' format is described in :mod:`.case_files`.

All credentials, card numbers, SSNs, IBANs, e-mails and phone numbers are well-known test or
documentation values, or invented; none is real.

Durations (seconds) and costs (USD) are derived from each model's nominal speed and price and
the text lengths, with a small jitter taken from a hash of the row key, so the output is
byte-for-byte reproducible. Regenerate with::

    python -m sonar_core.demo.generate
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from sonar_core.dataset import DATASET_FIELDS
from sonar_core.perturbations import perturb

from .agent_cases import agent_rows
from .case_files import CASES_DIR, MODELS, PERTURBED_FILE, Case, CaseFileError, load_cases, load_perturbed
from .frozen_perturbations import extra_whitespace, typos

__all__ = ["OUTPUT", "PROFILES", "perturb_input", "build_rows", "build_dataset", "dataset_text", "main"]

OUTPUT = Path(__file__).with_name("demo_llm_dataset.json")


@dataclass(frozen=True)
class ModelProfile:
    """Nominal price (USD per 1,000 tokens) and speed of one model."""

    usd_per_1k_in: float
    usd_per_1k_out: float
    first_token_s: float  # seconds before the first token
    tokens_per_s: float  # generation speed


PROFILES = {
    "acme-gpt-large": ModelProfile(usd_per_1k_in=0.005, usd_per_1k_out=0.015, first_token_s=0.55,
                                   tokens_per_s=48.0),
    "llama-3.1-8b-rag": ModelProfile(usd_per_1k_in=0.00018, usd_per_1k_out=0.00018, first_token_s=0.18,
                                     tokens_per_s=135.0),
    "mistral-7b-chat": ModelProfile(usd_per_1k_in=0.00025, usd_per_1k_out=0.00025, first_token_s=0.24,
                                    tokens_per_s=92.0),
}

#: Seconds a retrieval step adds when a row has retrieved context.
RETRIEVAL_S = 0.22


# --- Perturbed inputs ------------------------------------------------------------------------------


def perturb_input(text: str, name: str, seed: str) -> str:
    """The demo's perturbation ``name`` of ``text``; ``seed`` is the perturbed test case's key.

    Uppercase, base64 and base16 are the registered perturbators (deterministic, so their numpy
    seed changes nothing; uppercase is ``random_upper_case`` with every character chosen); typos and
    whitespace are the demo's frozen copies, which no registered perturbator reproduces.
    """
    if name == "typos":
        return typos(text, seed)
    if name == "whitespace":
        return extra_whitespace(text, seed)
    if name == "uppercase":
        return perturb(text, "random_upper_case", 0, uppercase_fraction=1.0)
    if name in ("base64", "base16"):
        return perturb(text, name, 0)
    raise CaseFileError(f"unknown perturbation {name!r}")


# --- Rows ----------------------------------------------------------------------------------------


def _tokens(text: str) -> int:
    # A rough 4-characters-per-token estimate is enough for demo costs.
    return math.ceil(len(text) / 4)


def _jitter(key: str) -> float:
    """A stable pseudo-random factor in [0.85, 1.25) taken from the row key."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return 0.85 + 0.40 * int.from_bytes(digest[:4], "big") / 2**32


def _timing(row_key: str, model: str, prompt: str, context: list[str], answer: str) -> tuple[float, float]:
    """(duration in seconds, cost in USD) of one answer."""
    profile = PROFILES[model]
    tokens_in = _tokens(prompt) + sum(_tokens(chunk) for chunk in context)
    tokens_out = max(1, _tokens(answer))
    seconds = profile.first_token_s + tokens_out / profile.tokens_per_s + tokens_in / 4000
    if context:
        seconds += RETRIEVAL_S
    seconds *= _jitter(row_key)
    cost = tokens_in * profile.usd_per_1k_in / 1000 + tokens_out * profile.usd_per_1k_out / 1000
    return round(seconds, 3), round(cost, 8)


def _row(case: Case, model: str, *, tc_key: str, prompt: str, categories: list[str],
         answer: str, context: list[str], original: str = "", perturbation: str = "") -> dict:
    key = f"{tc_key}::{model}"
    duration, cost = _timing(key, model, prompt, context, answer)
    row: dict = {
        "key": key,
        "test_case_key": tc_key,
        "model_key": model,
        "input": prompt,
        "actual_output": answer,
        "actual_duration": duration,
        "cost": cost,
        "categories": categories,
    }
    # The key order below is the shipped file's; changing it changes every row.
    if case.expected_output:
        row["expected_output"] = case.expected_output
    if case.context:
        row["context"] = context
    if case.corpus:
        row["corpus"] = case.corpus
    if case.output_condition:
        row["output_condition"] = case.output_condition
    if case.output_constraints:
        row["output_constraints"] = case.output_constraints
    if original:
        row["original_test_case_key"] = original
        row["perturbation"] = perturbation
        row["relationships"] = [{"type": "perturbation_of", "target": original}]
    unknown = set(row) - set(DATASET_FIELDS)
    if unknown:
        raise CaseFileError(f"{key}: fields the dataset format does not know: {sorted(unknown)}")
    return row


def build_rows(cases_dir: Path = CASES_DIR) -> list[dict]:
    """One row per case and model, originals first, then the perturbed copies."""
    originals = load_cases(cases_dir)
    by_key = {case.key: case for case in originals}
    if len(by_key) != len(originals):
        raise CaseFileError("duplicate test case key")
    rows = []
    for case in originals:
        for model in MODELS:
            rows.append(
                _row(case, model, tc_key=case.key, prompt=case.input, categories=[case.category],
                     answer=case.answers[model], context=case.context_by_model.get(model, case.context))
            )
    for pert in load_perturbed(cases_dir):
        case = by_key.get(pert.original)
        if case is None:
            raise CaseFileError(f"{PERTURBED_FILE}: no case {pert.original!r} to perturb")
        tc_key = f"{case.key}--{pert.perturbation}"
        prompt = perturb_input(case.input, pert.perturbation, seed=tc_key)
        if prompt == case.input:
            raise CaseFileError(f"{tc_key}: the perturbation leaves the input unchanged")
        for model in MODELS:
            context = pert.context_by_model.get(model, case.context_by_model.get(model, case.context))
            rows.append(
                _row(case, model, tc_key=tc_key, prompt=prompt, categories=[case.category, pert.perturbation],
                     answer=pert.answers[model], context=context, original=case.key,
                     perturbation=pert.perturbation)
            )
    # The agent conversations last, so every earlier row keeps its place.
    return rows + agent_rows(cases_dir, _timing)


def build_dataset(cases_dir: Path = CASES_DIR) -> dict:
    """The whole dataset document."""
    return {
        "schema_version": "1.0",
        "name": "Northwind Mutual demo",
        "description": (
            "Hand-written demo LLM dataset: three fictional models (acme-gpt-large, llama-3.1-8b-rag, "
            "mistral-7b-chat) answer RAG questions about the invented insurer Northwind Mutual, general "
            "knowledge questions, privacy and security bait, summarization, sentiment classification and "
            "open-ended prompts, plus perturbed copies (typos, uppercase, whitespace, base64, base16) and "
            "conversations of a claims assistant that calls tools (lookup_policy, file_claim). "
            "All PII and secrets are test or documentation values. Generated by "
            "python -m sonar_core.demo.generate."
        ),
        "inputs": build_rows(cases_dir),
    }


def dataset_text(dataset: dict) -> str:
    """The dataset as the shipped file spells it (one-space indent, UTF-8 kept, final newline)."""
    return json.dumps(dataset, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Write the dataset to ``--output`` (the shipped ``demo_llm_dataset.json`` by default)."""
    parser = argparse.ArgumentParser(prog="python -m sonar_core.demo.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the dataset")
    output = parser.parse_args(argv).output
    dataset = build_dataset()
    text = dataset_text(dataset)
    output.write_text(text, encoding="utf-8")
    cases = len({row["test_case_key"] for row in dataset["inputs"]})
    print(f"wrote {output} ({len(dataset['inputs'])} rows, {cases} test cases, {len(text.encode()) // 1024} KiB)")


if __name__ == "__main__":
    main()
