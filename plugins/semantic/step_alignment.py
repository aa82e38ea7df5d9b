"""Step Alignment and Completeness: the answer's procedure against the steps in the retrieved context."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Sequence

from sonar_core import Difference, Input, JUDGE_KEY_PARAM, Metric, Param, Row, RowResult

from .alignment import DELETION, INSERTION, MATCH, MISMATCH, align_steps
from .base import EMBEDDING_MODEL, MODEL_NOTE, SemanticEvaluator
from .sentences import SENTENCE_LEVEL, SENTENCE_PARAMETERS
from .step_extraction import extract_with_judge
from .steps import context_steps, text_steps
from .vectors import similarities

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["StepAlignmentCompletenessEvaluator"]

DEFAULT_CUTOFF = 0.7
#: How steps are found: Sonar's regular expressions and heuristics, or the LLM judge (the catalogue's way).
EXTRACTIONS = ("heuristic", "judge")
_INF = float("inf")
# Longest step quoted in a row's error message (the full steps are in its details).
_QUOTE_LIMIT = 80
_CONTEXT_CACHE_SIZE = 4096


def _quote(text: str) -> str:
    return "'" + (text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT - 1] + "…") + "'"


def _count(key: str, name: str, description: str, lower_is_better: bool, primary: bool = False) -> Metric:
    return Metric(key, name, description, value_range=(0.0, _INF), higher_is_better=not lower_is_better,
                  threshold=0.75, is_primary=primary, display_format=".0f")


class StepAlignmentCompletenessEvaluator(SemanticEvaluator):
    """Edit counts (``edits`` primary, lower is better) and step counts per row."""

    id = "step_alignment_completeness"
    display_name: ClassVar[str] = "Step Alignment and Completeness"
    tagline: ClassVar[str] = "Whether the answer gives the retrieved procedure's steps, all of them and in order."
    description: ClassVar[str] = (
        "Step Alignment and Completeness checks a procedure (steps, a sequence, a process) in the actual answer "
        "against the retrieved context as ground truth (after Sudjianto and Sudjianto, \"Evaluating Procedure "
        "Generation in RAG Systems\"). **Step extraction** (regular expressions and heuristics, no LLM): a text's "
        "steps are its list items (lines starting `1.`, `2)`, `(3)`, `Step 4:`, `a)`, `-`, `*`, `•`; a line right "
        "below an item continues it), else numbers 1, 2, 3... in running text, else the sentences from the first "
        "to the last one opening with a sequence word (First, Then, Next, After that, Finally, ...). In the "
        "context, only chunks with such an enumeration give steps; a text without any (the answer, or the "
        "context as a whole) takes each sentence as a step (`sentence_fallback`). **Matching**: two steps are the "
        "same when the cosine similarity of their embeddings is at least `similarity_cutoff` (default 0.7: with "
        "MiniLM, paraphrases of one step score about 0.7 to 0.95 and different steps of one procedure mostly "
        "below 0.5, though two steps sharing their key words can reach 0.8; the alignment's order keeps most of "
        "those apart). "
        "**Alignment**: dynamic programming (an edit distance) finds the fewest **edits** turning the answer's "
        "steps into the context's: an **insertion** is a context step the answer lacks, a **deletion** an answer "
        "step the context lacks, a **mismatch** a context step in whose place the answer says something else; "
        "edits = insertions + deletions + mismatches, ties going to the alignment with the most matched "
        "similarity. The step counts of the context and the answer tell how reliable the row is. Details hold "
        "both step lists and the alignment; the error message names the missing, extra and mismatched steps. "
        "With `step_extraction: judge` the steps come from an LLM instead, as the catalogue's evaluator can: "
        "the judge (`custom_eval_judge_config_key`, else the run's default judge) lists the steps of the "
        "context (its chunks together) and of the answer, one numbered line each, or `none`; an unreadable "
        "answer leaves that text to the heuristic, and the details' `*_steps_from` say which way each list "
        "was found. With `sentence_level_metrics` (default on) each answer step's alignment is in "
        "`actual_output_meta`. " + MODEL_NOTE
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    parameters: ClassVar[tuple[Param, ...]] = (
        EMBEDDING_MODEL,
        Param("similarity_cutoff", float, DEFAULT_CUTOFF,
              "Cosine similarity from which an answer step and a context step count as the same step.",
              min=0.0, max=1.0),
        Param("sentence_fallback", bool, True,
              "When a text (the context, the answer) has no enumeration, take each of its sentences as a step; "
              "off, such a text has no steps."),
        *SENTENCE_PARAMETERS,
        Param("step_extraction", str, "heuristic",
              "How steps are extracted: `heuristic` (regular expressions and heuristics, no LLM) or `judge` (the "
              "LLM judge lists them, as the catalogue's evaluator can).", choices=EXTRACTIONS),
        Param(JUDGE_KEY_PARAM, str, None,
              "Key of the LLM configuration that extracts steps with `step_extraction: judge` (`sonar judges` "
              "lists them). Empty means the run's default judge."),
        Param("sentence_level_metrics", bool, True,
              "Write each answer step with its alignment (match, mismatch or extra step, and its similarity) into "
              "the row's `actual_output_meta`."),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            "step extraction: the catalogue uses an LLM and/or regular expressions; Sonar's default "
            "(step_extraction: heuristic) uses regular expressions and heuristics only (list items, inline "
            "numbers, sequence words, then sentences); step_extraction: judge asks an LLM with Sonar's prompt "
            "(the catalogue shows none)",
            "the heuristic needs no LLM and gives the same steps on every run",
            "set step_extraction: judge for the catalogue's LLM extraction; procedures written as prose are split "
            "into sentences by the heuristic",
            field="formula",
        ),
        Difference(
            "parameter h2ogpte_connection_config_key: listed by the catalogue, absent in Sonar",
            "Sonar has no h2oGPTe host; its LLM step extraction uses an LLM configuration "
            "(custom_eval_judge_config_key, else the run's default judge)",
            "remove it from a configuration copied from H2O Sonar; name the LLM in custom_eval_judge_config_key",
            field="parameter:h2ogpte_connection_config_key",
        ),
        Difference(
            "parameter h2ogpte_llm_model_name: listed by the catalogue, absent in Sonar",
            "an LLM configuration of Sonar names its model itself",
            "remove it from a configuration copied from H2O Sonar; describe the model in the LLM configuration file",
            field="parameter:h2ogpte_llm_model_name",
        ),
        Difference(
            "parameter min_test_cases: listed by the catalogue, absent in Sonar",
            "Sonar scores any number of rows and reports every model's figures with its row counts",
            "remove it from a configuration copied from H2O Sonar",
            field="parameter:min_test_cases",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        _count("edits", "Edits", "Insertions, deletions and substitutions of steps that turn the answer's steps "
               "into the context's; fewer is better.", lower_is_better=True, primary=True),
        _count("insertions", "Insertions", "Context steps missing from the actual answer.", lower_is_better=True),
        _count("deletions", "Deletions", "Actual answer steps not in the retrieved context.", lower_is_better=True),
        _count("mismatches", "Mismatches", "Aligned step positions where the answer says something other than the "
               "context.", lower_is_better=True),
        _count("retrieved_context_steps", "Retrieved context steps", "Steps found in the retrieved context.",
               lower_is_better=False),
        _count("actual_answer_steps", "Actual answer steps", "Steps found in the actual answer.",
               lower_is_better=False),
    )

    def __init__(self, params: dict[str, Any], ctx) -> None:
        super().__init__(params, ctx)
        # Every model's row of a test case shares the context: extract its steps once.
        self._context_steps = functools.lru_cache(maxsize=_CONTEXT_CACHE_SIZE)(
            lambda chunks: context_steps(chunks, self.sentences, self.params["sentence_fallback"]))

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        found = [(self._context_steps(tuple(row.context)),
                  text_steps(row.actual_output, self.sentences, self.params["sentence_fallback"])) for row in rows]
        if self.params["step_extraction"] == "judge":
            found = self._judge_steps(rows, found)
        vectors = self.embed_batch(step for (context, _), (answer, _) in found for step in (*context, *answer))
        return [self._score(context, answer, vectors) for context, answer in found]

    def _judge_steps(self, rows: Sequence[Row], heuristic: list) -> list:
        """The judge's steps of every row's context and answer; the heuristic's where it gave none readable."""
        client = self.ctx.judge(self.params.get(JUDGE_KEY_PARAM))
        contexts = ["\n\n".join(row.context) for row in rows]
        listed = extract_with_judge(contexts + [row.actual_output for row in rows], client,
                                    lambda text: {"evaluator": self.ctx.label or self.id})
        found = []
        for context, row, (from_context, from_answer) in zip(contexts, rows, heuristic):
            found.append(tuple(_judged(listed[text], fallback)
                               for text, fallback in ((context, from_context), (row.actual_output, from_answer))))
        return found

    def _score(self, context, answer, vectors) -> RowResult:
        import numpy as np

        (source_steps, context_method), (answer_steps, answer_method) = context, answer
        if source_steps and answer_steps:
            matrix = similarities(vectors.of(source_steps), vectors.of(answer_steps))
        else:
            matrix = np.zeros((len(source_steps), len(answer_steps)))
        alignment = align_steps(matrix, self.params["similarity_cutoff"])
        values = {"edits": alignment.edits, "insertions": alignment.insertions, "deletions": alignment.deletions,
                  "mismatches": alignment.mismatches, "retrieved_context_steps": len(source_steps),
                  "actual_answer_steps": len(answer_steps)}
        details = {
            "context_steps": source_steps, "context_steps_from": context_method,
            "answer_steps": answer_steps, "answer_steps_from": answer_method,
            "alignment": [{"op": s.op, "context_step": s.context_index, "answer_step": s.answer_index,
                           "similarity": s.similarity} for s in alignment.steps],
        }
        meta = None
        if self.params["sentence_level_metrics"] and answer_steps:
            meta = [{"tokenization": SENTENCE_LEVEL, "data": _step_meta(alignment, source_steps, answer_steps)}]
        return RowResult({k: float(v) for k, v in values.items()}, details=details,
                         error_message=self._explain(alignment, source_steps, answer_steps), actual_output_meta=meta)

    @staticmethod
    def _explain(alignment, source_steps, answer_steps) -> str | None:
        """The row's edits in words, or None when there are none."""
        if not alignment.edits:
            return None
        parts = []
        for step in alignment.steps:
            if step.op == INSERTION:
                parts.append(f"missing step {_quote(source_steps[step.context_index])}")
            elif step.op == DELETION:
                parts.append(f"extra step {_quote(answer_steps[step.answer_index])}")
            elif step.op == MISMATCH:
                parts.append(f"{_quote(answer_steps[step.answer_index])} in place of "
                             f"{_quote(source_steps[step.context_index])} ({step.similarity:.2f})")
        return f"{alignment.edits} edit(s): " + "; ".join(parts)


def _judged(steps: list[str] | None, fallback: tuple[list[str], str]) -> tuple[list[str], str]:
    """(steps, method) from the judge's list, or the heuristic's, marked, when the judge gave none readable."""
    if steps is None:
        return fallback[0], f"{fallback[1]} (the judge's answer listed no steps)"
    return steps, "judge"


def _step_meta(alignment, source_steps, answer_steps) -> list[dict[str, Any]]:
    """One entry per answer step: its alignment op, the context step it stands for and their similarity."""
    entries: list[dict[str, Any]] = []
    for step in alignment.steps:
        if step.answer_index is None:
            continue
        matched = step.op in (MATCH, MISMATCH)
        entries.append({"text": answer_steps[step.answer_index],
                        "metrics": {"step_similarity": step.similarity if matched else None},
                        "meta": {"alignment": step.op,
                                 "context_step": source_steps[step.context_index] if matched else None}})
    return entries
