"""``sonar judges``: every LLM configuration, and whether it answers."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import ConfigError
from .configs import DEFAULT_JUDGE, load_llm_configs
from .service import LLMService

__all__ = ["check_configs"]


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
