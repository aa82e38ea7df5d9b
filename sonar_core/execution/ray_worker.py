"""What a Ray worker runs: one shard of rows through an evaluator, or one chunk of prompts through a host.

A worker never touches the driver's disk. It gets everything it needs with the shard (a
:class:`WorkerKit`: the LLM configurations, the cache mode, handles of the driver's cache reader,
of the run's answer inbox and of the cluster-wide limiters). Each new host or judge answer goes to
the driver as it arrives, through the inbox (:mod:`.ray_answers`: a kill loses only the calls in
flight); everything else it made comes back with the results (:class:`ShardOutput`): journal
events, log lines, client counters. The driver writes them; it stays the only writer of the
result tree, the journal and the response cache.

This module imports Ray only inside the functions that talk to an actor, so it is cheap to import.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..contract import RowResult
from ..dataset import Row
from ..llm.adaptive import LimitChange, outcome_of
from ..llm.ledger import CostLedger, Price
from .ray_answers import ShippedCache

__all__ = ["WorkerKit", "ShardOutput", "CollectingJournal", "RayGate", "score_shard", "ask_chunk", "EvaluatorWorker"]


@dataclass
class WorkerKit:
    """What every shard of one run needs on a worker (picklable; actor handles included)."""

    run_id: str
    llm_configs: Any
    default_judge: str | None
    cache_mode: str
    #: The driver-node actor that reads the response cache (None: the run uses no cache).
    reader: Any = None
    #: The driver-node actor new answers are put into as they arrive (:mod:`.ray_answers`; None: no cache).
    inbox: Any = None
    #: LLM configuration key -> its cluster-wide limiter actor.
    judge_gates: dict[str, Any] = field(default_factory=dict)
    device: str = "auto"
    plugins: list[str] = field(default_factory=list)
    base_dir: str | None = None
    #: The run's ``prices:`` (host and judge key -> USD per 1,000 tokens), for the workers' cost ledgers.
    prices: dict[str, Any] = field(default_factory=dict)


@dataclass
class ShardOutput:
    """A shard's results and everything the driver must write for it."""

    results: list[Any]
    #: ``(key, llm, request, response, kind)`` per new answer the inbox could not take (none while the
    #: run's inbox is up: answers go through it as they arrive), for the driver's response cache.
    writes: list[tuple] = field(default_factory=list)
    #: Cache hits per kind of asker (the driver's ``cache info`` counts them).
    hits: dict[str, int] = field(default_factory=dict)
    #: ``(message, class, method, fields)`` per journal event, in the order they happened.
    events: list[tuple] = field(default_factory=list)
    #: ``(level, message)`` per line of the evaluator's log.
    logs: list[tuple[int, str]] = field(default_factory=list)
    #: LLM configuration key -> the client's counters (added to the driver's client).
    stats: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The shard's calls, tokens and cost (CostLedger.take), added to the run's ledger (docs/costs.md).
    costs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    seconds: float = 0.0
    node: str = ""
    pid: int = 0
    #: The evaluator's plain attributes after the shard (say, the name of the model it chose), so the
    #: driver's instance writes the same tables (``Evaluator.tables`` may read them).
    state: dict[str, Any] = field(default_factory=dict)
    #: Embedding model -> this shard's counters (requested, encoded, hits, calls, seconds): the driver takes
    #: the seconds; the other counters it replays from ``embed_requests`` (:mod:`.ray_embeddings`).
    embedding_stats: dict[str, dict[str, float]] = field(default_factory=dict)
    #: ``(model, [digest of each text])`` per embedding request of the shard, in order.
    embed_requests: list[tuple[str, list[bytes]]] = field(default_factory=list)
    #: Texts this worker encoded for the shard (not found in its own vector cache).
    encoded: int = 0
    #: Models the worker's store loaded during the shard (run.json's ``model_loads``).
    model_loads: list[dict[str, Any]] = field(default_factory=list)
    #: The device the worker's embedding service resolved (``auto`` until a model is used).
    device: str = ""


def _node() -> str:
    """The Ray node this worker runs on (its id's first 12 characters), and the host's name."""
    try:
        import ray

        return f"{ray.get_runtime_context().get_node_id()[:12]}@{socket.gethostname()}"
    except Exception:  # outside Ray (a direct call in a test)
        return socket.gethostname()


_PLAIN = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def plain_state(evaluator: Any) -> dict[str, Any]:
    """An evaluator's attributes that are plain data (no model, no context): what a shard hands back."""
    return {name: value for name, value in vars(evaluator).items() if name not in ("params", "ctx") and _plain(value)}


class CollectingJournal:
    """A journal that keeps its events for the driver instead of writing them."""

    def __init__(self) -> None:
        self.records: list[tuple] = []

    def event(self, message: str, cls: str, method: str, **fields: Any) -> None:
        self.records.append((message, cls, method, fields))

    def events(self, message: str, cls: str, method: str, items) -> None:
        self.records.extend((message, cls, method, dict(item)) for item in items)


class RayGate:
    """A cluster-wide slot around each call of an LLM client (``LLMClient.gate``): each call reports how it
    ended to the limiter, and a change of the cluster's limit it caused goes to ``on_change``
    (``LLMClient.limit_changed``: the worker's journal and counters)."""

    def __init__(self, limiter: Any, on_change: Callable[[Any], None] | None = None) -> None:
        self.limiter = limiter
        self.on_change = on_change

    def __call__(self) -> "_RaySlot":
        return _RaySlot(self)


class _RaySlot:
    """One call's slot (its own object: the client's threads hold slots at once)."""

    def __init__(self, gate: RayGate) -> None:
        self.gate = gate
        self.window = 0

    def __enter__(self) -> None:
        import ray

        self.window = ray.get(self.gate.limiter.acquire.remote()) or 0

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        import ray

        change = ray.get(self.gate.limiter.release.remote(self.window, outcome_of(error)))
        if change and self.gate.on_change is not None:
            self.gate.on_change(LimitChange(change["from"], change["to"], change["reason"]))


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelno, record.getMessage()))


_PLUGINS: dict[tuple[str, ...], Any] = {}


def _plugins(modules: list[str]) -> Any:
    """The worker process's plugin manager for these modules, loaded once per process."""
    from ..plugins import get_plugin_manager

    key = tuple(modules)
    if key not in _PLUGINS:
        manager = get_plugin_manager(modules)
        manager.load()
        _PLUGINS[key] = manager
    return _PLUGINS[key]


class _Shard:
    """The services of one shard on a worker: journal, cache, LLM service and evaluator log."""

    def __init__(self, kit: WorkerKit, name: str) -> None:
        from ..llm import LLMService

        self.journal = CollectingJournal()
        self.cache = ShippedCache(kit.reader, kit.cache_mode, kit.inbox) if kit.cache_mode != "off" else None
        gates = kit.judge_gates

        class WorkerLLM(LLMService):
            def client(self, key: str):
                client = super().client(key)
                if client.gate is None and key in gates:
                    client.gate = RayGate(gates[key], client.limit_changed)
                return client

        self.llm = WorkerLLM(kit.llm_configs, default_judge=kit.default_judge, cache_mode=kit.cache_mode,
                             journal=self.journal, cache=self.cache)
        # The shard's own tally of calls, tokens and cost; the driver adds it to the run's ledger.
        self.ledger = CostLedger(prices={key: Price.model_validate(value) for key, value in kit.prices.items()})
        self.llm.ledger = self.ledger
        self.handler = _ListHandler()
        self.logger = logging.getLogger(f"sonar.worker.{name}.{os.getpid()}.{id(self)}")
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False
        self.logger.addHandler(self.handler)
        self.embeddings: Any = None
        self._before: dict[str, dict[str, float]] = {}
        self._loads_from = 0

    def watch(self, embeddings: Any) -> Any:
        """Count what ``embeddings`` does from now on (the driver adds it to its own service's counters)."""
        self.embeddings = embeddings
        self._before = {model: dict(counter) for model, counter in embeddings.stats.items()}
        self._loads_from = len(embeddings.store.loads)
        return embeddings

    def output(self, results: list[Any], began: float, evaluator: Any = None, keep: bool = False) -> ShardOutput:
        """What the shard made, for the driver; ``keep``: the services serve the next shard too (an actor's)."""
        if self.cache is not None:
            self.cache.settle()  # the driver flushes what the inbox holds once the shard has returned
        stats = {key: asdict(client.stats) for key, client in self.llm._clients.items()}
        if not keep:
            for client in self.llm._clients.values():
                client.close()
            self.logger.removeHandler(self.handler)
        cache = self.cache
        used: dict[str, dict[str, float]] = {}
        loads: list[dict[str, Any]] = []
        device = ""
        requests: list[tuple[str, list[bytes]]] = []
        if self.embeddings is not None:
            for model, counter in self.embeddings.stats.items():
                before = self._before.get(model, {})
                used[model] = {name: value - before.get(name, 0) for name, value in counter.items()}
            loads = list(self.embeddings.store.loads[self._loads_from:])
            device = self.embeddings.device_setting
            requests = self.embeddings.take_requests()
        out = ShardOutput(embedding_stats=used, model_loads=loads, device=device, embed_requests=requests,
                          encoded=int(sum(c.get("unique_encoded", 0) for c in used.values())),
                          results=results, writes=cache.writes if cache else [], hits=cache.hits if cache else {},
                           events=self.journal.records, logs=self.handler.lines, stats=stats,
                           costs=self.ledger.take(),
                           seconds=time.perf_counter() - began, node=_node(), pid=os.getpid(),
                           state=plain_state(evaluator) if evaluator is not None else {})
        if keep:  # the next shard's buffers start empty
            self.journal.records = []
            self.handler.lines = []
            if self.cache is not None:
                self.cache.writes, self.cache.hits = [], {}
            for client in self.llm._clients.values():
                client.stats = type(client.stats)()
        return out


def _evaluate(evaluator: Any, rows: list[Row], batch_size: int) -> list[RowResult]:
    """The shard's rows in the batches the local executor would use (a shard is whole batches)."""
    results: list[RowResult] = []
    for start in range(0, len(rows), batch_size):
        batch = rows[start:start + batch_size]
        out = list(evaluator.evaluate(batch))
        if len(out) != len(batch):
            raise RuntimeError(f"evaluator returned {len(out)} results for a batch of {len(batch)} rows")
        results += out
    return results


def _context(kit: WorkerKit, shard: _Shard, label: str, embeddings: Any = None):
    from ..context import EvaluationContext
    from ..run_memo import RunMemo
    from .ray_embeddings import RecordingEmbeddings

    embeddings = shard.watch(embeddings or RecordingEmbeddings(device=kit.device))
    return EvaluationContext(memo=RunMemo(), logger=shard.logger, embeddings=embeddings,
                             device=embeddings.device_setting, llm=shard.llm, label=label,
                             plugins=_plugins(kit.plugins))


def score_shard(kit: WorkerKit, cls: type, params: dict[str, Any], label: str, rows: list[Row],
                batch_size: int) -> ShardOutput:
    """One shard of rows scored by a fresh evaluator (a Ray task's body)."""
    began = time.perf_counter()
    shard = _Shard(kit, label)
    evaluator = cls(params, _context(kit, shard, label))
    return shard.output(_evaluate(evaluator, rows, batch_size), began, evaluator)


def _one_model_thread() -> None:
    """Models on this actor run on one thread: an actor holds one CPU, so N actors use N cores (a
    model's intra-op threads would only contend with the other actors'). The embedding service
    encodes on one thread wherever it runs (sonar_core/models/embeddings.py), so this changes no
    vector; another model's last bits may depend on its thread count, as on Ray before."""
    try:
        import torch
    except ImportError:  # an evaluator whose model is not a torch one
        return
    torch.set_num_threads(1)


class EvaluatorWorker:
    """An actor of a model-loading evaluator's pool: its models load once, then serve every shard sent to it.

    ``kit`` may be replaced per call (:meth:`score` takes one): the run's embedding pool serves
    every embedding evaluator of the run, each with its own judges.
    """

    def __init__(self, kit: WorkerKit) -> None:
        from .ray_embeddings import RecordingEmbeddings

        _one_model_thread()
        self.kit = kit
        # One embedding service per actor: a model it loads (and the texts it encoded) serve every shard.
        self.embeddings = RecordingEmbeddings(device=kit.device)
        #: (label, class, shard services, evaluator) of the job this actor serves now.
        self._job: tuple | None = None

    def score(self, cls: type, params: dict[str, Any], label: str, rows: list[Row], batch_size: int,
              kit: WorkerKit | None = None) -> ShardOutput:
        """One shard, by this actor's one instance of the evaluator (made on its first shard, as a
        local run makes one per evaluator)."""
        began = time.perf_counter()
        job = self._job
        if job is None or job[0] != label or job[1] is not cls:
            kit = kit or self.kit
            shard = _Shard(kit, label)
            job = self._job = (label, cls, shard, cls(params, _context(kit, shard, label, self.embeddings)))
        _, _, shard, evaluator = job
        shard.watch(self.embeddings)
        return shard.output(_evaluate(evaluator, rows, batch_size), began, evaluator, keep=True)

    def pid(self) -> int:
        return os.getpid()


_HOSTS: dict[tuple[str, str], Any] = {}


def ask_chunk(kit: WorkerKit, entry: dict[str, Any], prices: dict[str, Any], gate: Any, prompts: list[str],
              tags: list[dict[str, Any]], repeat: int = 0) -> ShardOutput:
    """One chunk of prompts asked of one model under test (a Ray task's body).

    The host is built once per worker process (a local model loads once) from its configuration
    entry; its client holds the cluster-wide gate, so the host's ``max_concurrency`` and
    ``requests_per_minute`` hold across every worker.
    """
    from ..hosts.factory import HostFactoryServices
    from ..hosts.registry import build_hosts, prices_from

    began = time.perf_counter()
    shard = _Shard(kit, str(entry.get("key")))
    ident = (kit.run_id, str(entry.get("key")))
    host = _HOSTS.get(ident)
    if host is None:
        services = HostFactoryServices(cache=shard.cache, device=kit.device, base_dir=kit.base_dir,
                                       prices=prices_from(prices, [str(entry.get("key"))]))
        host = next(iter(build_hosts([entry], services, _plugins(kit.plugins))))
        _HOSTS[ident] = host
    client = getattr(host, "client", None)
    if client is not None:
        client.cache = shard.cache if getattr(host.spec, "cache", True) else None
        client.gate = RayGate(gate, client.limit_changed) if gate is not None else None
        client.stats = type(client.stats)()  # this chunk's counters only
        client.ledger = shard.ledger
    host.attach(shard.journal)
    answers = host.ask_many(prompts, tags=tags, repeat=repeat)  # repeat: the epoch (docs/epochs.md)
    out = shard.output(answers, began)
    if client is not None:
        out.stats = {"host": asdict(client.stats)}
    return out
