"""Benchmark: perplexity and GPTScore rows/s against the raw batched forward pass of the same model.

Takes the demo dataset's answers (repeated to N rows), scores them with the Perplexity and the
Question Answering (GPTScore) evaluators on a causal LM from the model store (default: the
embedded SmolLM2-135M-Instruct), and times the floor: the model's plain forward pass
(``model(input_ids, attention_mask)``, full logits) over exactly the token sequences the
evaluator feeds it, in the same length-sorted batches. The goal is at least 0.8x the floor.

    .venv/bin/python bench/bench_local_models.py [--rows 96] [--model smollm2] [--device cpu]
"""

from __future__ import annotations

import argparse
import time

import torch

from sonar_core.demo import __file__ as demo_init
from sonar_core.models import get_store, pick_device
from sonar_core.testing import make_context, make_row
from sonar_plugins.language_model.gptscore_question_answering import GptScoreQuestionAnsweringEvaluator
from sonar_plugins.language_model.likelihood import length_batches
from sonar_plugins.language_model.loaders import load_perplexity_lm, load_scoring_tokenizer
from sonar_plugins.language_model.perplexity import PerplexityEvaluator


def demo_rows(n: int):
    import json
    from pathlib import Path

    records = json.loads((Path(demo_init).parent / "demo_llm_dataset.json").read_text())["inputs"]
    records = [r for r in records if r.get("actual_output")]
    return [make_row(test_case_key=f"t{i}", model_key="m", input=records[i % len(records)]["input"],
                     actual_output=records[i % len(records)]["actual_output"]) for i in range(n)]


def floor_seconds(model, sequences: list[list[int]], pad: int) -> float:
    """Seconds of the plain batched forward pass over ``sequences`` (the same batches as the evaluators)."""
    started = time.perf_counter()
    with torch.inference_mode():
        for batch in length_batches([len(s) for s in sequences]):
            width = max(len(sequences[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, i in enumerate(batch):
                ids[r, : len(sequences[i])] = torch.tensor(sequences[i])
                mask[r, : len(sequences[i])] = 1
            model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device))
    return time.perf_counter() - started


def timed(evaluator, rows) -> float:
    started = time.perf_counter()
    list(evaluator.evaluate(rows))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=96)
    parser.add_argument("--model", default="SmolLM2-135M-Instruct")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    device = pick_device(args.device)
    store = get_store()
    rows = demo_rows(args.rows)
    model, tokenizer = load_scoring_tokenizer(store, args.model, device)
    load_perplexity_lm(store, args.model, device)
    ctx = make_context(device=device)
    print(f"model {args.model} on {device}, torch threads {torch.get_num_threads()}, {len(rows)} rows")

    perplexity = PerplexityEvaluator(PerplexityEvaluator.validate_params({"perplexity_model": args.model}), ctx)
    timed(perplexity, rows[:4])  # warm-up
    answers = tokenizer([r.actual_output for r in rows], add_special_tokens=False)["input_ids"]
    floor = floor_seconds(model, answers, tokenizer.pad_token_id)
    ours = timed(perplexity, rows)
    tokens = sum(len(a) for a in answers)
    print(f"perplexity: {len(rows) / ours:8.2f} rows/s; floor (forward pass) {len(rows) / floor:8.2f} rows/s; "
          f"ratio {floor / ours:.2f}x of the floor ({tokens} tokens)")

    qa = GptScoreQuestionAnsweringEvaluator(
        GptScoreQuestionAnsweringEvaluator.validate_params({"gpt_score_model": args.model}), ctx)
    timed(qa, rows[:2])
    sequences = []
    for row in rows:
        for instruction in qa.templates.values():
            for prefix, target in qa.pairs(row, instruction):
                p = tokenizer(prefix, add_special_tokens=False)["input_ids"]
                t = tokenizer(target, add_special_tokens=False)["input_ids"]
                sequences.append(p + t)
    floor = floor_seconds(model, sequences, tokenizer.pad_token_id)
    ours = timed(qa, rows)
    tokens = sum(len(s) for s in sequences)
    print(f"gptscore_question_answering: {len(rows) / ours:8.2f} rows/s; floor (forward pass) "
          f"{len(rows) / floor:8.2f} rows/s; ratio {floor / ours:.2f}x of the floor "
          f"({len(sequences)} sequences, {tokens} tokens)")


if __name__ == "__main__":
    main()
