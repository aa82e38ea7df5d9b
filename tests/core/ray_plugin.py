"""A test evaluator for the Ray executor: it "loads a model" (so it runs on an actor pool) and is slow.

``ray_slow_len`` scores each answer with its length; each batch sleeps ``SONAR_RAY_SLEEP`` seconds
(default 0.3) so a test can kill one of its actors while the run goes. It says it can use a GPU,
which makes it a model-loading evaluator to the Ray executor (one actor pool per run).
"""

import os
import time

from sonar_core import Evaluator, Input, Metric, ResultKind, RowResult, hookimpl


class RaySlowLenEvaluator(Evaluator):
    id = "ray_slow_len"
    display_name = "Slow length"
    tagline = "Scores each answer with its length, slowly."
    required_inputs = (Input.ACTUAL_ANSWER,)
    kind = ResultKind.SCORE
    supports_gpu = True
    metrics = (Metric("length", "Length", "Characters in the answer.", threshold=10.0, is_primary=True),)

    def evaluate(self, rows):
        time.sleep(float(os.environ.get("SONAR_RAY_SLEEP", "0.3")))
        self.scored_in = "shard"  # plain state a worker hands back
        return [RowResult(values={"length": float(len(row.actual_output))}) for row in rows]


@hookimpl
def register_evaluators(register):
    register(RaySlowLenEvaluator)
