"""The actor pools of a Ray run: the actors that hold a model and score the shards of model-backed evaluators.

Two kinds (docs/scale-out.md):

- the **embedding pool**, shared by the run's embedding evaluators: made by the first one, kept
  while embedding evaluators follow each other (each actor keeps its model and its vector cache,
  and shard ``i`` of every evaluator goes to the same actor, which has most of that shard's texts
  already), and ended before any other evaluator's shards run, so its CPUs are free for them;
- a **model pool** per evaluator that loads another model (``model_params`` or ``supports_gpu``:
  toxicity, perplexity, GPTScore, NLI...), ended when the evaluator is done.

Each actor takes one CPU and runs its model on one thread (``torch.set_num_threads(1)``), so N
actors use N cores; or one GPU, when the evaluator can use one and the cluster has GPUs. How many:
``ray_model_actors`` (``auto``: as many as the cluster has CPUs, or GPUs; a number: that many, at
most the cluster's CPUs or GPUs, so none waits for a slot that never comes), never more than the
evaluator has shards. The cluster's whole count, not what is free at that moment: the pool of the
evaluator before gives its CPUs back only once Ray has ended its actors, a moment later. Shard ``i`` goes to actor ``i mod N``. Since each text is embedded on its
own and an evaluator's batches are the same on every actor, the results do not depend on N.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ActorPools", "pool_size"]


def pool_size(setting: int | str | None, shards: int, total: int) -> int:
    """Actors for an evaluator of ``shards`` shards: ``setting`` (``auto`` or None: ``total``, the cluster's
    CPUs or GPUs; a number: that many, at most ``total``); at least one, at most ``shards``."""
    wanted = total if setting in (None, "auto") else min(int(setting), total)
    return max(1, min(wanted, shards))


class ActorPools:
    """Makes, keeps and ends a run's actor pools (see the module docstring)."""

    def __init__(self, ray: Any, worker: type, run_id: str, setting: int | str | None, device: str) -> None:
        self.ray = ray
        self.worker = ray.remote(worker)
        self.run_id = run_id
        self.setting = setting
        self.device = device
        #: The embedding pool's actors (empty: none now).
        self.embedders: list[Any] = []
        self._made = 0

    def _resources(self, gpu_capable: bool) -> tuple[str, int]:
        """("GPU" or "CPU", the cluster's count of it) for the actors of an evaluator."""
        total = self.ray.cluster_resources()
        if gpu_capable and self.device != "cpu" and total.get("GPU", 0) >= 1:
            return "GPU", int(total["GPU"])
        return "CPU", int(total.get("CPU", 0))

    def _make(self, count: int, kind: str, name: str, kit: Any) -> list[Any]:
        options = self.worker.options
        return [options(num_cpus=1 if kind == "CPU" else 0, num_gpus=1 if kind == "GPU" else 0,
                        max_restarts=-1, max_task_retries=-1, name=f"{name}:{i}").remote(kit)
                for i in range(count)]

    def embedding(self, shards: int, kit: Any) -> list[Any]:
        """The embedding pool: kept from the evaluator before, grown to this evaluator's size if it has
        more shards, or made now."""
        kind, total = self._resources(True)
        count = pool_size(self.setting, shards, total)
        if count > len(self.embedders):
            self._made += 1
            self.embedders += self._make(count - len(self.embedders), kind,
                                         f"sonar:{self.run_id}:embeddings:{self._made}", kit)
        return self.embedders

    def model(self, label: str, shards: int, gpu_capable: bool, kit: Any) -> list[Any]:
        """A pool for one model-loading evaluator; the caller ends it with :meth:`end`."""
        self.end_embedding()
        kind, total = self._resources(gpu_capable)
        return self._make(pool_size(self.setting, shards, total), kind, f"sonar:{self.run_id}:{label}", kit)

    def end_embedding(self) -> None:
        """End the embedding pool (its CPUs go back to the cluster); the next embedding evaluator makes a new one."""
        actors, self.embedders = self.embedders, []
        self.end(actors)

    def end(self, actors: list[Any]) -> None:
        for actor in actors:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone (its node died)
                pass
