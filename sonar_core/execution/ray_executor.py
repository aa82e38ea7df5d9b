"""The Ray executor: a run's rows scored as shards on a Ray cluster, with the artifacts of a local run.

What runs where (docs/scale-out.md):

- Row-wise evaluators: the rows to score are cut into shards of ``ray_shard_rows`` (whole batches
  of ``batch_size``, so an evaluator sees the batches it would see locally); each shard is a Ray
  task that builds the evaluator and scores its batches.
- Evaluators that load a model (``model_params``, or ``supports_gpu``): a pool of actors per
  evaluator, each loading its models once and running them on one thread; one CPU each (one GPU
  each when the evaluator can use one and the cluster has GPUs), as many as ``ray_model_actors``
  says (default: the cluster's CPUs, or GPUs) (:mod:`.ray_pool`).
- Evaluators with an embedding model: one pool shared by consecutive embedding evaluators, shard
  ``i`` of each on actor ``i mod N`` (it has that shard's texts cached already). Each text is
  encoded on its own (:mod:`sonar_core.models.embeddings`), so a vector does not depend on which
  actor encoded it or what else it encoded: the scores are byte-identical to a local run for any
  N, and run.json's embedding counters are replayed on the driver as one process counts them
  (:mod:`.ray_embeddings`).
- Judges and models under test: called from the workers, each call holding a slot of the LLM's
  cluster-wide limiter (:mod:`.ray_limiter`), so ``max_concurrency`` and ``requests_per_minute``
  hold for the cluster as a whole.
- The driver (this process) stays the only writer of the result tree, the journal and the
  response cache. It answers rows from the row cache before dispatching; workers read answers
  through a cache reader actor on the driver's node and put each new one into the run's answer
  inbox as it arrives, which the driver's sink thread writes to the cache at once
  (:mod:`.ray_answers`): a killed run loses only the calls in flight, as a local run does.
- A local instance the run starts is the run's alone: its own temp folder, and a reaper process
  that ends whatever is left of it when the driver ends, even by SIGKILL (:mod:`.ray_reaper`).

Evaluators that ask the models under test themselves (``requires_hosts``) score on the driver.
Results come back in shard order; a worker or actor that dies is retried by Ray (tasks up to
three times, actors restarted with their calls retried), so no row is lost.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

from ..config import RunConfig
from ..contract import Evaluator
from ..dataset import Row
from ..errors import ConfigError
from .executors import LOCAL, Batch
from .ray_answers import AnswerInbox, AnswerSink
from .ray_embeddings import EmbeddingTally
from .ray_limiter import CacheReader, ClusterLimiter
from .ray_pool import ActorPools
from .ray_reaper import LocalCluster
from .ray_worker import EvaluatorWorker, ShardOutput, WorkerKit, ask_chunk, score_shard

__all__ = ["RayExecutor", "uses_pool"]

#: Retries of a shard task whose worker died (Ray's own retry; the row results are recomputed).
TASK_RETRIES = 3


def uses_pool(cls: type[Evaluator]) -> bool:
    """Whether an evaluator loads a model (so it runs on an actor pool that loads it once per actor)."""
    return bool(cls.model_params) or bool(cls.supports_gpu)


def uses_embeddings(cls: type[Evaluator]) -> bool:
    """Whether an evaluator embeds texts (so it runs on the run's embedding pool)."""
    return "embedding" in cls.model_params.values()


def _python_path() -> str:
    """The driver's import path for the workers (so a ``-p`` plugin module imports there as well)."""
    return os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))


@contextmanager
def _sigterm_kept() -> Iterator[None]:
    """``ray.init`` replaces the process's SIGTERM handler with ``sys.exit`` (measured: a run asking its
    host went on asking for seconds, then ended by an abort in Ray's shutdown). The handler the process
    had is put back: SIGTERM ends a run on Ray as it ends a local one (the answers are stored as they
    arrive, and the reaper ends the instance)."""
    main = threading.current_thread() is threading.main_thread()
    kept = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and kept is not None:
            signal.signal(signal.SIGTERM, kept)


class RayExecutor:
    """Scores shards on a Ray cluster; see the module docstring."""

    name = "ray"

    def __init__(self, config: RunConfig) -> None:
        import ray

        self.ray = ray
        self.config = config
        self.address = config.ray_address
        self.shard_rows = config.ray_shard_rows
        self._owns = False
        self._lock = threading.Lock()
        self._reader: Any = None
        self._inbox: Any = None
        self._sink: AnswerSink | None = None
        self._cluster: LocalCluster | None = None
        self._gates: dict[str, Any] = {}
        self._services: Any = None
        self._pools: ActorPools | None = None
        self._tally: EmbeddingTally | None = None
        self.run_id = ""
        self._score = ray.remote(score_shard).options(num_cpus=1, max_retries=TASK_RETRIES)
        self._ask = ray.remote(ask_chunk).options(num_cpus=1, max_retries=TASK_RETRIES)

    # -- the cluster ----------------------------------------------------------------------------

    def start(self, run_id: str, journal: Any, services: Any) -> None:
        """Start a local Ray instance or join ``ray_address`` (unless this process joined one already)."""
        ray = self.ray
        if not ray.is_initialized():
            options: dict[str, Any] = {}
            if not self.address and not os.environ.get("RAY_ADDRESS"):  # an instance of the run's own
                try:
                    self._cluster = LocalCluster()
                except OSError as exc:
                    raise ConfigError(f"a local Ray instance: cannot make its temporary folder or start its "
                                      f"reaper: {exc}") from None
                options["_temp_dir"] = self._cluster.folder
            try:
                with self._cluster.marking() if self._cluster else nullcontext(), _sigterm_kept():
                    ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                             logging_level=logging.WARNING,
                             runtime_env={"env_vars": {"PYTHONPATH": _python_path()}}, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                self._end_cluster()
                where = f"ray_address '{self.address}'" if self.address else "a local Ray instance"
                raise ConfigError(f"{where}: cannot start or join Ray: {str(exc).splitlines()[0]}") from None
            except BaseException:
                self._end_cluster()
                raise
            self._owns = True
        self.run_id = run_id
        self._services = services
        self._pools = ActorPools(ray, EvaluatorWorker, run_id, self.config.ray_model_actors, self.config.device)
        self._tally = EmbeddingTally(services.embeddings)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        journal.event("started executor", "RayExecutor", "start", executor="ray", address=self.address or "local",
                      resources={k: v for k, v in sorted(ray.cluster_resources().items())
                                 if not k.startswith("node:")},
                      nodes=len(nodes), shard_rows=self.shard_rows or self.config.batch_size)

    def close(self) -> None:
        """Write the answers that arrived (an interrupted run's last ones too), then stop what the run started."""
        ray = self.ray
        try:
            sink, self._sink = self._sink, None
            try:
                if sink is not None:
                    sink.close()
            except Exception:  # noqa: BLE001 - the run reports its own outcome; a finished run flushed every shard
                pass
            if self._pools is not None:
                self._pools.end_embedding()
            actors = [*self._gates.values(), self._reader, self._inbox]
            self._reader = self._inbox = None
            self._gates.clear()
            for actor in actors:
                if actor is not None:
                    ray.kill(actor, no_restart=True)
        finally:
            if self._owns and ray.is_initialized():
                ray.shutdown()
                self._owns = False
            self._end_cluster()

    def _end_cluster(self) -> None:
        """The reaper ends what ``ray.shutdown()`` left of the run's own instance, and removes its folder."""
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def _reader_actor(self) -> Any:
        """The cache reader, on this node (it reads the driver's file); made on first need."""
        llm = self._services.llm
        if llm.cache_mode == "off":
            return None
        if self._reader is None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            node = self.ray.get_runtime_context().get_node_id()
            llm.cache  # noqa: B018 - the driver opens (creates) the file first, as a local run does
            self._reader = self.ray.remote(CacheReader).options(
                num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                str(llm.cache_path), llm.cache_mode, llm.fresh_since)
        return self._reader

    def _inbox_actor(self) -> Any:
        """The answer inbox, on this node, and the sink thread that writes what it receives (made on first
        need; None when the run uses no cache)."""
        llm = self._services.llm
        if llm.cache_mode == "off":
            return None
        with self._lock:
            if self._inbox is None:
                from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

                node = self.ray.get_runtime_context().get_node_id()
                self._inbox = self.ray.remote(AnswerInbox).options(
                    num_cpus=0, name=f"sonar:{self.run_id}:answers",
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
                self._sink = AnswerSink(self.ray, self._inbox, llm.cache.put)
            return self._inbox

    def _gate(self, name: str, slots: int, per_minute: float | None, adaptive: bool = False) -> Any:
        with self._lock:
            if name not in self._gates:
                self._gates[name] = self.ray.remote(ClusterLimiter).options(
                    num_cpus=0, max_concurrency=1000, name=f"sonar:{self.run_id}:limit:{name}",
                    get_if_exists=True).remote(slots, per_minute, adaptive)
            return self._gates[name]

    def _kit(self, judge_keys: list[str] = ()) -> WorkerKit:
        llm, config = self._services.llm, self.config
        gates = {}
        for key in judge_keys:
            judge = llm.config(key)
            gates[key] = self._gate(f"judge:{key}", judge.max_concurrency, judge.requests_per_minute,
                                    judge.adaptive_concurrency)
        return WorkerKit(run_id=self.run_id, llm_configs=llm.configs, default_judge=llm.default_judge,
                         cache_mode=llm.cache_mode, reader=self._reader_actor() if judge_keys or gates else None,
                         inbox=self._inbox_actor() if judge_keys or gates else None,
                         judge_gates=gates, device=config.device, plugins=list(config.plugins),
                         base_dir=config.base_dir, prices=dict(config.prices))

    # -- what the driver does with a shard's output --------------------------------------------

    def _absorb(self, out: ShardOutput, journal: Any, logger: logging.Logger | None, clients: Callable) -> None:
        """Write what a worker made: cache entries, counters, journal events, log lines."""
        if out.writes or out.hits:
            cache = self._services.llm.cache
            if cache is not None:
                for key, llm, request, response, kind in out.writes:
                    cache.put(key, llm, request, response, kind)
                with self._lock:
                    for kind, hits in out.hits.items():
                        cache.hits[kind] = cache.hits.get(kind, 0) + hits
        for message, cls, method, fields in out.events:
            journal.event(message, cls, method, **fields)
        if logger is not None:
            for level, line in out.logs:
                logger.log(level, "%s", line)
        for key, stats in out.stats.items():
            client = clients(key)
            if client is not None:
                client._count(**stats)
        ledger = self._services.llm.ledger
        if ledger is not None and out.costs:
            ledger.merge(out.costs)  # the workers' calls, tokens and cost, in run.json's costs
        self._absorb_models(out)

    def _absorb_models(self, out: ShardOutput) -> None:
        """The workers' embedding counters and model loads, into the driver's service (run.json's record).

        A model loaded by several actors is recorded once, as a local run loads it once.
        """
        embeddings = self._services.embeddings
        if self._tally is not None:
            self._tally.replay(out.embed_requests)  # requested, unique_encoded, cache_hits, calls
        for model, counter in out.embedding_stats.items():
            if counter.get("seconds"):
                embeddings._count(model, seconds=counter["seconds"])
        with self._lock:
            if out.device and embeddings.device_setting == "auto":
                embeddings._device_setting = out.device
            loads = embeddings.store.loads
            seen = {(d.get("kind"), d.get("model"), d.get("folder")) for d in loads[embeddings._first_load:]}
            for load in out.model_loads:
                if (load.get("kind"), load.get("model"), load.get("folder")) not in seen:
                    loads.append(load)
                    seen.add((load.get("kind"), load.get("model"), load.get("folder")))

    def _get(self, ref: Any) -> ShardOutput:
        """A shard's output, once the answers it put into the inbox are in the response cache."""
        try:
            out = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise
        if self._sink is not None:
            self._sink.flush()
        return out

    # -- scoring --------------------------------------------------------------------------------

    def batches(self, job: Any, evaluator: Evaluator, rows: list[Row], size: int, *, services: Any = None,
                journal: Any = None, logger: logging.Logger | None = None) -> Iterator[Batch]:
        """The rows as shards on the cluster; results handed back in shard order (see the module docstring)."""
        cls = job.cls
        if cls.requires_hosts or not rows:
            yield from LOCAL.batches(job, evaluator, rows, size)
            return
        shard = size * max(1, -(-(self.shard_rows or size) // size))
        shards = [rows[i:i + shard] for i in range(0, len(rows), shard)]
        llm = self._services.llm
        kit = self._kit([llm.judge_key(cls.judge_key(job.params))] if cls.requires_judge else [])
        actors: list[Any] = []
        ray, pools = self.ray, self._pools
        on = "embedding actors" if uses_embeddings(cls) else "actor pool" if uses_pool(cls) else "tasks"
        if uses_embeddings(cls):
            embedders = pools.embedding(len(shards), kit)
            refs = [embedders[i % len(embedders)].score.remote(cls, job.params, job.label, part, size, kit)
                    for i, part in enumerate(shards)]
        elif uses_pool(cls):
            actors = pools.model(job.label, len(shards), bool(cls.supports_gpu), kit)
            refs = [actors[i % len(actors)].score.remote(cls, job.params, job.label, part, size)
                    for i, part in enumerate(shards)]
        else:
            pools.end_embedding()  # its CPUs, for these tasks
            refs = [self._score.remote(kit, cls, job.params, job.label, part, size) for part in shards]
        count = len(pools.embedders) if uses_embeddings(cls) else len(actors)
        done = False
        try:
            start = 0
            for number, (part, ref) in enumerate(zip(shards, refs), start=1):
                out = self._get(ref)
                self._absorb(out, journal, logger, lambda key: llm.client(key))
                vars(evaluator).update(out.state)  # what tables() may read (the model it chose)
                yield start, part, out.results, out.seconds, {"executor": "ray", "shard": number,
                                                              "shards": len(shards), "node": out.node,
                                                              "pid": out.pid, "on": on,
                                                              **({"actors": count, "encoded": out.encoded}
                                                                 if count else {})}
                start += len(part)
            done = True
        finally:
            if not done and not actors and not uses_embeddings(cls):  # the other shards are not wanted
                for ref in refs:
                    ray.cancel(ref)
            pools.end(actors)

    # -- the host pipeline ----------------------------------------------------------------------

    def asker(self, hosts: Any, journal: Any) -> Callable:
        """How the pipeline asks a host a chunk of prompts: a Ray task, under the host's cluster-wide limits."""
        entries = {str(entry.get("key")): entry for entry in self.config.hosts if isinstance(entry, dict)}
        kit = self._kit()
        kit.reader, kit.inbox = self._reader_actor(), self._inbox_actor()

        def ask(host: Any, prompts: list[str], tags: list[dict[str, Any]], repeat: int = 0) -> list[Any]:
            spec = getattr(host, "spec", None)
            gate = None
            if spec is not None and getattr(host, "client", None) is not None:
                gate = self._gate(f"host:{host.key}", spec.max_concurrency, spec.requests_per_minute,
                                  getattr(spec, "adaptive_concurrency", False))
            prices = {k: v for k, v in (self.config.prices or {}).items() if k == host.key}
            out = self._get(self._ask.remote(kit, entries[host.key], prices, gate, prompts, tags, repeat))
            client = getattr(host, "client", None)
            self._absorb(out, journal, None, lambda key: client)
            journal.event("asked shard", "RayExecutor", "ask", model_key=host.key, items=len(prompts),
                          node=out.node, pid=out.pid, seconds=round(out.seconds, 3))
            return out.results

        return ask
