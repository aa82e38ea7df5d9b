"""A plugin that adds a host kind ``echo`` (answers with its prefix and the prompt)."""

from __future__ import annotations

import sonar_core
from sonar_core.hosts import Host, HostAnswer


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
