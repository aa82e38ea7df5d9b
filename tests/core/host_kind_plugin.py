"""A plugin that adds a host kind ``echo`` (answers with its prefix and the prompt)."""

from __future__ import annotations

import sonar_core
from sonar_core import Host, HostAnswer


class EchoHost(Host):
    kind = "echo"

    def __init__(self, key: str, prefix: str) -> None:
        super().__init__(key, deterministic=True)
        self.prefix = prefix

    def ask_many(self, prompts, *, repeat=0, tags=None):
        return [HostAnswer(text=f"{self.prefix}{prompt}", duration=0.5, input_tokens=1, output_tokens=2)
                for prompt in prompts]


@sonar_core.hookimpl
def register_host_kinds(register):
    register("echo", lambda spec, services: EchoHost(spec["key"], spec.get("prefix", "")))


class AskAgainEvaluator(sonar_core.Evaluator):
    """Asks the row's host the question again through ctx.hosts: 1.0 when it answers the same."""

    id = "ask_again"
    display_name = "Ask again"
    required_inputs = (sonar_core.Input.QUESTION, sonar_core.Input.ACTUAL_ANSWER)
    metrics = (sonar_core.Metric("same_answer", "Same answer", "Asked again, the host answers the same.",
                                 threshold=0.5, is_primary=True),)

    def evaluate(self, rows):
        for row in rows:
            host = self.ctx.hosts.get(row.model_key)
            again = host.ask(row.input, repeat=1, tags={"evaluator": self.ctx.label, "test_case_key": row.test_case_key})
            yield sonar_core.RowResult(values={"same_answer": float(again.text == row.actual_output)})


@sonar_core.hookimpl
def register_evaluators(register):
    register(AskAgainEvaluator)
