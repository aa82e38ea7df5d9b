"""What a host kind's factory is given, and the helper that validates a host's settings for it.

A factory is ``factory(spec, services)``: ``spec`` the host's entry of the run configuration (a
dict), ``services`` the :class:`HostFactoryServices` below. :func:`spec_factory` makes one from a
pydantic settings model and a function taking the validated settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, validation_message
from ..jsontypes import JsonObject
from ..llm.secrets import Redactor
from .base import Host
from .client_host import Price

__all__ = ["HostFactoryServices", "spec_factory"]


@dataclass
class HostFactoryServices:
    """What a host factory may use: the run's journal, response cache, device and price table."""

    journal: Any = None
    cache: Any = None
    device: str = "auto"
    base_dir: str | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    redact: Redactor = field(default_factory=Redactor)

    def price_for(self, key: str) -> Price | None:
        return self.prices.get(key)


def spec_factory(spec_model: type[BaseModel], make: Callable[[Any, HostFactoryServices], Host]) -> Callable:
    """A factory taking the configuration dict: validates it with ``spec_model``, then calls ``make``."""

    def factory(spec: JsonObject, services: HostFactoryServices) -> Host:
        try:
            validated = spec_model.model_validate(spec)
        except ValidationError as exc:
            raise ConfigError(validation_message(exc, "setting")) from None
        return make(validated, services)

    # What `sonar hosts` shows: the kind's settings and description.
    factory.spec_model = spec_model  # type: ignore[attr-defined]
    return factory
