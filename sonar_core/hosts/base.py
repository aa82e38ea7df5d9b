"""The model-under-test interface: hosts answer prompts for the run's pipeline.

A *host* is one configured system under test (an OpenAI-compatible chat model, a RAG service
over HTTP, a local causal LM from the model store, or a Python callable). The pipeline asks every
host every test case and turns the answers into LLM-dataset rows; evaluators that need to ask a
host themselves (e.g. robustness baselines) reach the run's hosts through ``ctx.hosts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

__all__ = ["HostAnswer", "Host", "HostPool", "HostFactory"]


@dataclass
class HostAnswer:
    """One host's answer to one prompt.

    ``text`` is None when the host failed; then ``error`` says why in one line. ``duration`` is
    measured by Sonar (a cached answer keeps the duration of the call that produced it).
    """

    text: str | None
    error: str | None = None
    duration: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    contexts: list[str] | None = None
    cached: bool = False
    #: True when the answer's text was cleaned as it was read (docs/reliability.md).
    cleaned: bool = False

    @property
    def ok(self) -> bool:
        return self.text is not None and self.error is None


class Host:
    """One configured model under test.

    Subclasses set ``kind`` and implement :meth:`ask_many`. ``key`` is the ``model_key`` the
    rows it answers get; ``deterministic`` is True when its answers cannot vary between asks
    (temperature 0, greedy decoding, or declared so in the configuration).
    """

    kind: str = ""

    def __init__(self, key: str, *, deterministic: bool = False) -> None:
        self.key = key
        self.deterministic = deterministic

    def ask_many(self, prompts: list[str], *, repeat: int = 0,
                 tags: dict | list[dict] | None = None) -> list[HostAnswer]:
        """Answers in the order of ``prompts``.

        ``repeat`` is part of the response-cache key (baseline samples use repeat=1..n, the
        pipeline uses 0). ``tags`` are the journal's item fields (``evaluator``,
        ``test_case_key``): one dict for every prompt, or a list with one dict per prompt.
        Never raises for a failed call: that answer carries ``error``.
        """
        raise NotImplementedError

    def ask(self, prompt: str, *, repeat: int = 0, tags: dict | None = None) -> HostAnswer:
        """One answer (see :meth:`ask_many`)."""
        return self.ask_many([prompt], repeat=repeat, tags=tags)[0]

    def attach(self, journal) -> None:
        """Journal this host's events to ``journal`` from now on."""

    def close(self) -> None:
        """Release connections, threads and caches the host holds (idempotent)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} key={self.key!r} kind={self.kind!r}>"


# register_host_kinds: register(kind, factory); factory(spec: dict, services) -> Host.
HostFactory = Callable[..., Host]


class HostPool:
    """The run's hosts, by model key; on the EvaluationContext as ``ctx.hosts``."""

    def __init__(self, hosts: Iterable[Host] = ()) -> None:
        self._hosts: dict[str, Host] = {}
        for host in hosts:
            self.add(host)

    def add(self, host: Host) -> None:
        if host.key in self._hosts:
            raise ValueError(f"two hosts have the key '{host.key}'")
        self._hosts[host.key] = host

    def get(self, model_key: str) -> Host | None:
        return self._hosts.get(model_key)

    def keys(self) -> list[str]:
        return list(self._hosts)

    def __iter__(self):
        return iter(self._hosts.values())

    def __len__(self) -> int:
        return len(self._hosts)

    def attach(self, journal) -> None:
        for host in self._hosts.values():
            host.attach(journal)

    def close(self) -> None:
        for host in self._hosts.values():
            host.close()
