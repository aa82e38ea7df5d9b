"""``sonar judges``: every LLM configuration and whether it answers; ``sonar judges calibrate``."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import ConfigError
from .configs import DEFAULT_JUDGE, load_llm_configs
from .service import LLMService

__all__ = ["check_configs", "calibrate_judges"]


def _status(service: LLMService, key: str, check: bool) -> tuple[str, bool]:
    """(status text, failed) of one configuration."""
    try:
        client = service.client(key)
    except ConfigError as exc:
        return f"unavailable: {exc}", True
    reason = client.check()
    if reason:
        return f"unavailable: {reason}", True
    if not check:
        return "not checked", False
    started = time.perf_counter()
    answer = client.ping()
    if not answer.ok:
        return f"no answer: {answer.error}", True
    text = (answer.text or "").strip().replace("\n", " ")
    return f"answers in {time.perf_counter() - started:.1f} s: {text[:40]!r}", False


def check_configs(path: str | Path | None, *, check: bool = True):
    """Rows for the table, the default judge, the file read and whether any check failed."""
    configs = load_llm_configs(path, required=path is not None)
    service = LLMService(configs, cache_mode="off")
    rows, failed_any = [], False
    try:
        for key, config in sorted(configs.configs.items()):
            status, failed = _status(service, key, check)
            failed_any = failed_any or failed
            endpoint = "model store" if config.backend == "local" else (config.base_url or "OpenAI API")
            rows.append((key, config.backend, config.model, endpoint, config.api_key_env or "", service.redact(status)))
    finally:
        service.close()
    return rows, configs.default_judge or DEFAULT_JUDGE, configs.source, failed_any


def calibrate_judges(evaluators: dict[str, type], path: str | Path | None, *, judge: str | None = None,
                     only: tuple[str, ...] = (), params: dict[str, dict] | None = None,
                     cache_path: str | Path | None = None):
    """``sonar judges calibrate``: the judge ``judge`` (None: the default) measured on every judge
    evaluator's calibration set, or on those of ``only``.

    Returns ``(judge key, results, skipped)``; ``skipped`` holds ``(evaluator id, reason)`` for judge
    evaluators without a set (BYOP without ``calibration_set``). An id in ``only`` that is not a
    labelled judge evaluator, or has no set, is a ConfigError; so is a faulty set.
    """
    from ..judge_evaluator import JudgeEvaluator
    from .calibration import cache_for, calibrate, calibration_set_path

    params = params or {}
    judges = {eid: cls for eid, cls in sorted(evaluators.items())
              if isinstance(cls, type) and issubclass(cls, JudgeEvaluator) and cls.labels and cls.calibration_labels}
    for eid in only:
        if eid not in judges:
            raise ConfigError(f"'{eid}' is not a judge evaluator with constrained verdicts "
                              f"(those are: {', '.join(judges)})")
    unknown = sorted(set(params) - set(judges))
    if unknown:
        raise ConfigError(f"--param names '{unknown[0]}', which is not a judge evaluator")
    chosen = [eid for eid in judges if not only or eid in only]
    configs = load_llm_configs(path, required=path is not None)
    service = LLMService(configs, cache_path=Path(cache_path) if cache_path else None)
    results, skipped = [], []
    try:
        key = service.judge_key(judge)
        reason = service.unavailable(key)
        if reason:
            raise ConfigError(reason)
        cache = cache_for(service)
        for eid in chosen:
            cls = judges[eid]
            given = cls.validate_params(params.get(eid, {}))
            if calibration_set_path(cls, given) is None and eid not in only:
                hint = f"give one with --param {eid}.{cls.calibration_param}=FILE" if cls.calibration_param \
                    else "its plugin ships none"
                skipped.append((eid, f"no calibration set ({hint})"))
                continue
            results.append(calibrate(cls, given, service, key, cache=cache))
    finally:
        service.close()
    return key, results, skipped
