"""Which evaluators a run can run: its configuration's evaluator list made into checked jobs.

Every evaluator id, parameter and threshold is checked here, before anything runs; then each job
that cannot run on this dataset (a missing column, a missing model, no hosts, an unavailable
judge) is given its reason, so the run skips it with that reason (or stops under ``--strict``).
"""

from __future__ import annotations

from pathlib import Path

from .. import names
from ..config import ALL_OFFLINE, EvaluatorSpec, RunConfig
from ..contract import Evaluator, ParameterError
from ..dataset import LLMDataset
from ..errors import ConfigError
from .per_turn import check_per_turn
from ..hosts.base import HostPool
from ..llm import LLMService
from ..models import ModelMissingError, get_store
from ..params import ParamValues
from ..plugins import PluginManager
from .state import Job

__all__ = ["resolve_jobs", "missing_models", "missing_columns", "incompatibilities", "NO_HOSTS"]

#: Why an evaluator that asks the models under test itself (``requires_hosts``) is skipped.
NO_HOSTS = "the run has no model hosts (hosts: in the configuration); this evaluator asks the models under test itself"


def _thresholds(cls: type[Evaluator], params: ParamValues, spec: EvaluatorSpec, global_overrides: dict[str, float]) -> dict[str, float]:
    thresholds = {m.key: m.threshold for m in cls.metrics}
    if params.get("metric_threshold") is not None:
        thresholds[cls.primary_metric().key] = params["metric_threshold"]
    for source in (global_overrides, spec.thresholds):
        for key, value in source.items():
            if key in thresholds:
                thresholds[key] = float(value)
    unknown = sorted(set(spec.thresholds) - set(thresholds))
    if unknown:
        raise ConfigError(f"evaluator '{spec.label}': threshold for unknown metric '{unknown[0]}' "
                          f"(metrics: {', '.join(thresholds)})")
    return thresholds


def resolve_jobs(config: RunConfig, plugins: PluginManager, run_id: str, run_dir: Path) -> list[Job]:
    """Evaluator specs -> jobs, with every id and parameter checked before anything runs."""
    specs: list[EvaluatorSpec] = []
    implicit: set[str] = set()
    for spec in config.specs():
        if spec.id == ALL_OFFLINE:
            explicit = {s.id for s in config.specs() if s.id != ALL_OFFLINE}
            group = [EvaluatorSpec(id=eid) for eid, cls in plugins.evaluators.items()
                     if cls.offline and not cls.requires_judge and cls.joins_offline_group and eid not in explicit]
            implicit.update(s.label for s in group)
            specs += group
        else:
            specs.append(spec)
    known_metrics = {m.key for cls in plugins.evaluators.values() for m in cls.metrics}
    stray = sorted(set(config.thresholds) - known_metrics)
    if stray:
        raise ConfigError(f"threshold for unknown metric '{stray[0]}'")
    jobs, labels = [], set()
    for position, spec in enumerate(specs):
        cls = plugins.resolve(spec.id)
        if spec.label in labels:
            raise ConfigError(f"evaluator '{spec.label}' is listed twice; give one a distinct 'name'")
        labels.add(spec.label)
        try:
            params = cls.validate_params(spec.params)
            cls.check_with_plugins(params, plugins)
        except ParameterError as exc:
            raise ConfigError(str(exc)) from None
        if spec.per_turn:
            check_per_turn(spec.label, cls.inputs_for(params))
        thresholds = _thresholds(cls, params, spec, config.thresholds)
        job_id = names.job_uuid(run_id, spec.label, position)
        jobs.append(Job(spec, cls, params, thresholds, job_id,
                        run_dir / names.evaluator_dir_name(cls.qualified_name(), job_id),
                        implicit=spec.label in implicit))
    return jobs


def missing_models(jobs: list[Job]) -> dict[str, str]:
    """label -> why a job cannot run for lack of a model, for jobs from the ``offline`` group.

    A job listed by name whose model is missing raises :class:`ModelMissingError` instead:
    the user asked for it, so the run stops before any row is scored.
    """
    store = get_store()
    reasons: dict[str, str] = {}
    for job in jobs:
        if job.cls.missing_extra():  # its extra is missing: that is the reason, not the model
            continue
        for param in job.cls.model_params:
            ref = job.params.get(param)
            if not ref:
                continue
            try:
                store.resolve(ref)
            except ModelMissingError as exc:
                if not job.implicit:
                    raise ModelMissingError(f"evaluator '{job.label}': {exc}") from None
                reasons[job.label] = str(exc)
                break
    return reasons


def missing_columns(job: Job, dataset: LLMDataset) -> str | None:
    """Why the dataset cannot feed ``job`` at all (no column for a required input), or None."""
    missing = [needed.value for needed in job.cls.inputs_for(job.params) if not dataset.has_column_for(needed)]
    return f"the dataset has no column for required input(s): {', '.join(missing)}" if missing else None


def incompatibilities(jobs: list[Job], dataset: LLMDataset, *, columns_known: bool, llm: LLMService,
                      hosts: HostPool | None, replayed: dict[str, str] | None = None) -> dict[str, str]:
    """Label -> why the job cannot run: its extra not installed, a missing column (when the dataset's
    columns are known, i.e. not before the hosts answer a test suite), a missing model, no hosts, an
    unavailable judge."""
    if replayed is not None:
        # Replaying a pack: the packed run's verdicts, not this machine's. Its models and judges are not
        # asked (the pack's cache and recorded rows answer), so their absence here is no reason to skip.
        labels = {job.label for job in jobs}
        return {label: reason for label, reason in replayed.items() if label in labels}
    incompatible = {job.label: reason for job in jobs if (reason := job.cls.missing_extra())}
    for job in jobs:
        if columns_known and job.label not in incompatible and (reason := missing_columns(job, dataset)):
            incompatible[job.label] = reason
    for label, reason in missing_models(jobs).items():
        incompatible.setdefault(label, reason)
    for job in jobs:
        if job.cls.requires_hosts and hosts is None:
            incompatible.setdefault(job.label, NO_HOSTS)
    for job in jobs:
        if job.cls.requires_judge and job.label not in incompatible:
            reason = llm.unavailable(llm.judge_key(job.cls.judge_key(job.params)))
            if reason:
                incompatible[job.label] = reason
    return incompatible
