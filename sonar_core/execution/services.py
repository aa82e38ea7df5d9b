"""The services a run makes once, every setting checked before anything runs: the LLM service
(judges, response cache) and the models under test."""

from __future__ import annotations

from ..config import RunConfig
from ..errors import ConfigError
from ..hosts.base import HostPool
from ..hosts.factory import HostFactoryServices
from ..hosts.registry import build_hosts, prices_from
from ..llm import LLMService, load_llm_configs
from ..llm.ledger import CostLedger
from ..plugins import PluginManager
from .state import Job

__all__ = ["llm_service", "host_service", "cost_ledger"]


def llm_service(config: RunConfig, jobs: list[Job], fresh_since: float) -> LLMService:
    """The run's LLM service; every judge key the jobs name is checked here, before anything runs.

    ``fresh_since``: a refreshing run asks again for answers cached before this time (a resumed
    run passes its start, so what it fetched before the interruption is kept).
    """
    path = config.resolve_path(config.llm_configs) if config.llm_configs else None
    configs = load_llm_configs(path, required=path is not None)
    llm = LLMService(configs, default_judge=config.default_judge,
                     cache_path=config.resolve_path(config.llm_cache) if config.llm_cache else None,
                     cache_mode=config.cache_mode, fresh_since=fresh_since)
    llm.judge_key(None)  # an unknown default judge is a configuration error now
    for job in jobs:
        if job.cls.requires_judge:
            try:
                llm.judge_key(job.cls.judge_key(job.params))
            except ConfigError as exc:
                raise ConfigError(f"evaluator '{job.label}': {exc}") from None
    return llm


def host_service(config: RunConfig, plugins: PluginManager, llm: LLMService) -> HostPool:
    """The run's models under test, every entry and price checked before anything runs."""
    keys = [str(entry.get("key")) for entry in config.hosts if isinstance(entry, dict)]
    services = HostFactoryServices(cache=llm.cache, device=config.device, base_dir=config.base_dir,
                            prices=prices_from(config.prices, keys, sorted(llm.configs.configs)), redact=llm.redact)
    return build_hosts(config.hosts, services, plugins)


def cost_ledger(config: RunConfig, llm: LLMService, hosts: HostPool | None, *, dry: bool = False,
                previous: dict | None = None) -> CostLedger:
    """The run's cost ledger (docs/costs.md), every price checked, handed to the judges' and hosts' clients;
    ``previous``: the costs an interrupted run recorded, which a resumed run goes on from."""
    keys = [str(entry.get("key")) for entry in config.hosts if isinstance(entry, dict)]
    if config.max_cost is not None and config.executor != "local" and not dry:
        raise ConfigError("--max-cost (max_cost) needs the local executor: under Ray the calls are made in "
                          "the workers, where the budget cannot be kept")
    ledger = CostLedger(prices_from(config.prices, keys, sorted(llm.configs.configs)),
                        max_cost=None if dry else config.max_cost, dry=dry)
    ledger.resume_from(previous)
    llm.ledger = ledger
    for host in hosts or ():
        if getattr(host, "client", None) is not None:
            host.client.ledger = ledger
    return ledger
