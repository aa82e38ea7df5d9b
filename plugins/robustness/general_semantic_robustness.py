"""General Semantic Robustness (fmeval's algorithm): how much a model's answer changes when its prompt
is perturbed in ways that keep the meaning.

For each test case and model, the model's host is asked the original prompt and ``num_perturbations``
perturbed prompts; the answers to the perturbed prompts are compared with the answer to the original
by word error rate (syntactic change) and BERTScore dissimilarity, 1 - mean BERTScore F1 (semantic
change). A model that can answer the same prompt differently (sampling) would look fragile for that
alone, so for a non-deterministic host the scores are corrected by a baseline: the same two metrics
over the comb(num_baseline_samples, 2) pairs of answers to the unchanged prompt, reported as
max(0, d - d_base).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import (ConfigError, Evaluator, Input, Metric, PERTURBATOR_ALIASES, Param, ParameterError,
                        Row, RowResult, derive_seed, get_perturbator, make_perturbator)

from .bertscore import TokenVectors, bertscore, encode_tokens
from .loaders import load_token_encoder
from .wer import word_error_rate

__all__ = ["GeneralSemanticRobustnessEvaluator", "PERTURBED_COPY"]

#: fmeval checks determinism on this many of a model's first prompts (NUM_ROWS_DETERMINISTIC).
DETERMINISM_PROMPTS = 5
#: fmeval's parameter names for the three perturbators' settings -> (perturbator, its parameter).
FMEVAL_SETTINGS = {
    "butter_finger_perturbation_prob": ("butter_finger", "perturbation_prob"),
    "random_uppercase_corrupt_proportion": ("random_upper_case", "uppercase_fraction"),
    "whitespace_add_prob": ("whitespace_add_remove", "add_prob"),
    "whitespace_remove_prob": ("whitespace_add_remove", "remove_prob"),
}
#: Details of a row that is itself a perturbed copy (perturb: in the run configuration).
PERTURBED_COPY = "a perturbed copy of test case {}: this evaluator perturbs the original test case itself"


class GeneralSemanticRobustnessEvaluator(Evaluator):
    """Word error rate and BERTScore dissimilarity between answers to original and perturbed prompts."""

    id = "general_semantic_robustness"
    display_name: ClassVar[str] = "General Semantic Robustness"
    tagline: ClassVar[str] = "How much a model's answer changes when its prompt gets typos, case or whitespace noise."
    description: ClassVar[str] = (
        "The model under test is asked each question again, perturbed in ways that keep its meaning (by default "
        "fmeval's butter_finger keyboard typos), num_perturbations times. Word error rate (as jiwer computes it, "
        "the perturbed answers against the original answer) measures how much the words change; BERTScore "
        "dissimilarity, 1 - mean BERTScore F1 (greedy matching of token vectors, by default from the embedded "
        "all-MiniLM-L6-v2), how much the meaning changes. The model is asked the original prompt twice on its "
        "first 5 test cases (fmeval's determinism check) unless its host is declared deterministic; for a "
        "non-deterministic model each score d is reported as max(0, d - d_base), where d_base is the same "
        "metric over the comb(num_baseline_samples, 2) pairs of its answers to the unchanged prompt "
        "(fmeval's General Semantic Robustness). The run needs model hosts (`hosts:`): rows of models without a "
        "host, and perturbed copies made by `perturb:`, are not scored. Lower is better; the thresholds are "
        "Sonar's (fmeval sets none)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.QUESTION,)
    requires_hosts: ClassVar[bool] = True
    scores_perturbed_copies: ClassVar[bool] = False
    supports_gpu: ClassVar[bool] = True
    extra: ClassVar[str | None] = "models"
    needs_modules: ClassVar[tuple[str, ...]] = ('torch', 'transformers')
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("perturbation_type", str, "butter_finger",
              "Perturbator applied to the prompts (`sonar perturbators` lists them; fmeval's are butter_finger, "
              "random_upper_case and whitespace_add_remove)."),
        Param("num_perturbations", int, 5, "Perturbed prompts per test case.", min=1),
        Param("butter_finger_perturbation_prob", float, 0.1,
              "butter_finger: probability that a letter is replaced by a nearby key.", min=0.0, max=1.0),
        Param("random_uppercase_corrupt_proportion", float, 0.1,
              "random_upper_case: fraction of the characters put in upper case.", min=0.0, max=1.0),
        Param("whitespace_add_prob", float, 0.05,
              "whitespace_add_remove: probability of a space after a non-whitespace character.", min=0.0, max=1.0),
        Param("whitespace_remove_prob", float, 0.1,
              "whitespace_add_remove: probability that a whitespace character is removed.", min=0.0, max=1.0),
        Param("num_baseline_samples", int, 4,
              "Answers to the unchanged prompt whose comb(n, 2) pairs make the baseline of a non-deterministic "
              "model (the original answer and n - 1 more).", min=2),
        Param("bertscore_model", str, "all-MiniLM-L6-v2",
              "Transformer whose token vectors BERTScore matches: a model Sonar knows, a local folder or a "
              "Hugging Face id in the local cache (fmeval uses microsoft/deberta-xlarge-mnli)."),
        Param("bertscore_layer", int, -1, "Hidden layer whose vectors BERTScore uses (-1: the last)."),
        Param("seed", int, 5, "Seed of the perturbations (with each test case key; fmeval's default is 5)."),
    )
    model_params: ClassVar[dict[str, str]] = {"bertscore_model": "token_encoder"}
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("bertscore_dissimilarity", "BERTScore dissimilarity",
               "1 - mean BERTScore F1 between the answer to the original prompt and the answers to the perturbed "
               "prompts (less the baseline for a non-deterministic model); high means the meaning changed.",
               higher_is_better=False, threshold=0.2, is_primary=True),
        Metric("word_error_rate", "Word error rate",
               "Word edits turning the original answer into the perturbed answers, per word of the original "
               "(less the baseline for a non-deterministic model); high means the words changed.",
               value_range=(0.0, math.inf), higher_is_better=False, threshold=0.5),
    )
    problem_type: ClassVar[str] = "robustness"
    category: ClassVar[str] = "Robustness"

    def __init__(self, params: dict[str, Any], ctx) -> None:
        super().__init__(params, ctx)
        #: model key -> (deterministic, how that was decided), decided on the model's first test cases.
        self._determinism: dict[str, tuple[bool, str]] = {}

    # -- perturbation ------------------------------------------------------------------------------

    @classmethod
    def check_with_plugins(cls, params: dict[str, Any], plugins) -> None:
        """``perturbation_type`` must name a perturbator the run's plugins register (``-p`` modules
        included): checked before the run starts."""
        try:
            get_perturbator(params["perturbation_type"], plugins)
        except ConfigError as exc:  # names the registered ones
            raise ParameterError(f"parameter 'perturbation_type' of evaluator '{cls.id}': {exc}") from None

    def _perturbator(self):
        name = self.params["perturbation_type"]
        canonical = PERTURBATOR_ALIASES.get(name, name)
        settings = {param: self.params[key] for key, (owner, param) in FMEVAL_SETTINGS.items()
                    if owner in (name, canonical)}
        if self.ctx.plugins is None:
            raise ConfigError("General Semantic Robustness needs the run's plugin manager (ctx.plugins) "
                              "to find its perturbator")
        return make_perturbator(name, settings, self.ctx.plugins)

    def _perturbed_prompts(self, perturbator, row: Row) -> list[str]:
        import numpy as np

        rng = np.random.default_rng(derive_seed(self.params["seed"], row.test_case_key, perturbator.name))
        return [perturbator.apply(row.input, rng) for _ in range(self.params["num_perturbations"])]

    # -- scoring -----------------------------------------------------------------------------------

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        results: list[RowResult | None] = [None] * len(rows)
        by_model: dict[str, list[int]] = defaultdict(list)
        for i, row in enumerate(rows):
            if row.original_test_case_key:
                results[i] = RowResult({"bertscore_dissimilarity": None, "word_error_rate": None},
                                       details={"not_scored": PERTURBED_COPY.format(row.original_test_case_key)})
                continue
            by_model[row.model_key].append(i)
        perturbator = self._perturbator()
        pending: list[tuple[int, dict[str, Any]]] = []
        for model_key, indexes in by_model.items():
            host = self.ctx.hosts.get(model_key) if self.ctx.hosts is not None else None
            if host is None:
                message = f"no model host '{model_key}' in the run: the model cannot be asked perturbed prompts"
                for i in indexes:
                    results[i] = RowResult({"bertscore_dissimilarity": None, "word_error_rate": None},
                                           error_message=message)
                continue
            for i, answers in zip(indexes, self._ask(host, [rows[i] for i in indexes], perturbator)):
                if isinstance(answers, str):
                    results[i] = RowResult({"bertscore_dissimilarity": None, "word_error_rate": None},
                                           error_message=answers)
                else:
                    pending.append((i, answers))
        for i, result in zip([i for i, _ in pending], self._score([a for _, a in pending])):
            results[i] = result
        return results  # type: ignore[return-value]

    def _ask(self, host, rows: list[Row], perturbator) -> list[dict[str, Any] | str]:
        """Per row, its answers (original, perturbed, baseline) or why they could not all be had."""
        label = self.ctx.label or self.id

        def tags(purpose: str, subset: list[Row]) -> list[dict[str, str]]:
            # One per prompt: the journal names the test case each ask is for.
            return [{"evaluator": label, "purpose": purpose, "test_case_key": row.test_case_key} for row in subset]

        prompts = [row.input for row in rows]
        originals = host.ask_many(prompts, repeat=0, tags=tags("original", rows))
        perturbed_prompts = [self._perturbed_prompts(perturbator, row) for row in rows]
        n = self.params["num_perturbations"]
        flat = host.ask_many([p for ps in perturbed_prompts for p in ps], repeat=0,
                             tags=tags("perturbed", [row for row in rows for _ in range(n)]))
        perturbed = [flat[k * n:(k + 1) * n] for k in range(len(rows))]
        repeats: dict[int, list] = {}
        decided = self._determinism.get(host.key)
        if decided is None:
            if host.deterministic:
                decided = (True, "declared by its host")
            else:
                # fmeval's check: the first prompts asked twice; any different answer means sampling.
                count = min(DETERMINISM_PROMPTS, len(rows))
                repeats[1] = host.ask_many(prompts[:count], repeat=1, tags=tags("determinism", rows[:count]))
                same = all(a.text == b.text for a, b in zip(originals[:count], repeats[1]))
                decided = (same, f"{count} prompt(s) asked twice: "
                                 f"{'the same answers' if same else 'different answers'}")
            self._determinism[host.key] = decided
        deterministic = decided[0]
        if not deterministic:
            for repeat in range(1, self.params["num_baseline_samples"]):
                have = repeats.get(repeat, [])
                if len(have) < len(rows):
                    repeats[repeat] = have + host.ask_many(prompts[len(have):], repeat=repeat,
                                                           tags=tags("baseline", rows[len(have):]))
        out: list[dict[str, Any] | str] = []
        for k, row in enumerate(rows):
            baseline = [repeats[r][k] for r in range(1, self.params["num_baseline_samples"])] if not deterministic else []
            failed = next(((what, a) for what, group in (("original prompt", [originals[k]]),
                                                          ("a perturbed prompt", perturbed[k]),
                                                          ("the original prompt again (baseline)", baseline))
                           for a in group if a.text is None), None)
            if failed:
                what, answer = failed
                out.append(f"host '{host.key}' gave no answer to {what}: {answer.error or 'no text'}")
                continue
            out.append({"original": originals[k].text, "perturbed_prompts": perturbed_prompts[k],
                        "perturbed": [a.text for a in perturbed[k]], "baseline": [a.text for a in baseline],
                        "deterministic": deterministic, "determinism": decided[1]})
        return out

    def _score(self, answers: list[dict[str, Any]]) -> list[RowResult]:
        if not answers:
            return []
        texts = sorted({t for a in answers for t in [a["original"], *a["perturbed"], *a["baseline"]]})
        model, tokenizer = self.ctx.load_model(load_token_encoder, self.params["bertscore_model"])
        vectors: dict[str, TokenVectors] = dict(zip(texts, encode_tokens(
            model, tokenizer, texts, self.params["bertscore_layer"], str(model.device))))
        results = []
        for a in answers:
            original, perturbed = a["original"], a["perturbed"]
            # fmeval: BERTScore(target = original answer, prediction = perturbed answer); WER(prediction =
            # perturbed answer, reference = original answer), over all perturbations at once.
            f1s = [bertscore(vectors[original], vectors[p])[2] for p in perturbed]
            dissimilarity = 1.0 - sum(f1s) / len(f1s)
            wer = word_error_rate([original] * len(perturbed), perturbed)
            details: dict[str, Any] = {
                "deterministic": a["deterministic"], "determinism_check": a["determinism"],
                "perturbed_prompts": a["perturbed_prompts"], "original_answer": original,
                "perturbed_answers": perturbed, "bertscore_f1": f1s,
            }
            if not a["deterministic"]:
                # fmeval's pairs: the repeated answers, then the original answer, in combinations order;
                # BERTScore(target = first, prediction = second), WER(prediction = first, reference = second).
                samples = [*a["baseline"], original]
                pairs = list(itertools.combinations(samples, 2))
                base_f1 = [bertscore(vectors[first], vectors[second])[2] for first, second in pairs]
                base_dissimilarity = 1.0 - sum(base_f1) / len(base_f1)
                base_wer = word_error_rate([second for _, second in pairs], [first for first, _ in pairs])
                details.update({
                    "baseline_answers": a["baseline"],
                    "bertscore_dissimilarity_raw": dissimilarity, "word_error_rate_raw": wer,
                    "bertscore_dissimilarity_baseline": base_dissimilarity, "word_error_rate_baseline": base_wer,
                })
                dissimilarity = max(0.0, dissimilarity - base_dissimilarity)
                wer = max(0.0, wer - base_wer)
            results.append(RowResult({"bertscore_dissimilarity": dissimilarity, "word_error_rate": wer},
                                     details=details))
        return results
