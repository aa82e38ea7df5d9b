"""Toy evaluators that use the core's model services, for the runner's model tests.

``toy_embed`` scores the cosine similarity of answer and expected answer through ``ctx.embed``
(one call per batch, as real evaluators do). ``toy_lm`` names a causal LM it never loads, so a
test can check what the runner does when a model is missing.
"""

import numpy as np

from sonar_core import Evaluator, Input, Metric, Param, RowResult, hookimpl


class ToyEmbedEvaluator(Evaluator):
    id = "toy_embed"
    display_name = "Toy embed"
    required_inputs = (Input.ACTUAL_ANSWER, Input.EXPECTED_ANSWER)
    parameters = (Param("embedding_model", str, "all-MiniLM-L6-v2", "Embedding model."),)
    model_params = {"embedding_model": "embedding"}
    metrics = (Metric("similarity", "Similarity", "Cosine of answer and expected answer.", is_primary=True),)

    def evaluate(self, rows):
        texts = [row.actual_output for row in rows] + [row.expected_output for row in rows]
        vectors = self.ctx.embed(texts, self.params["embedding_model"])
        answers, expected = vectors[:len(rows)], vectors[len(rows):]
        for a, e in zip(answers, expected):
            yield RowResult(values={"similarity": float(np.dot(a, e))})


class ToyLMEvaluator(Evaluator):
    id = "toy_lm"
    display_name = "Toy LM"
    required_inputs = (Input.ACTUAL_ANSWER,)
    parameters = (Param("lm", str, "smollm2", "Causal LM."),)
    model_params = {"lm": "causal_lm"}
    metrics = (Metric("one", "One", "Always 1.", is_primary=True),)

    def evaluate(self, rows):
        for _ in rows:
            yield RowResult(values={"one": 1.0})


@hookimpl
def register_evaluators(register):
    register(ToyEmbedEvaluator)
    register(ToyLMEvaluator)
